// An op library of the kind vLLM ships, as a symmflow plugin: custom ops defined
// and implemented with SYMMFLOW_LIBRARY, loaded by `symmflow run --load`.
//
// - exampleops::fused_all_reduce_rms_norm_(Tensor(a!) x, Tensor w, str group_name,
//   float eps=1e-06) -> Tensor(a!): all-reduces x in place over the group, then
//   normalizes each row by its RMS and scales by w — in place, returning x (the
//   aliasing form `Tensor(a!) -> Tensor(a!)`, compiled without a schema change). x must be in
//   symmetric memory (register_symm_mem_args), so the compiler places x's
//   producer in the symmetric arena.
// - exampleops::scaled_copy(Tensor x, float s) -> Tensor: an opaque producer
//   (the compiler cannot plan its output): when its result must be symmetric it
//   runs under a symmetric-allocation scope.
//
//   symmflow run examples/plugin/rms_norm.sf --nproc 2 --check \
//       --load build/dev/examples/plugin/libsymmflow_example_ops.so
#include "symmflow/kernels/copy.h"
#include "symmflow/kernels/pointwise.h"
#include "symmflow/kernels/reduce.h"
#include "symmflow/library/library.h"
#include "symmflow/runtime/collectives/collectives.h"
#include "symmflow/runtime/world.h"

namespace sf = symmflow;
namespace k = symmflow::kernels;

namespace {

using Args = std::span<const sf::IValue>;
using Results = std::vector<sf::IValue>;

Results fused_all_reduce_rms_norm(sf::OpContext&, Args a) {
  const sf::Tensor& x = a[0].to_tensor();
  const sf::Tensor& w = a[1].to_tensor();
  sf::dist::all_reduce_(sf::dist::group(a[2].to_string()), x, sf::dist::ReduceOp::sum);
  // y = x * rsqrt(mean(x^2, last dim) + eps) * w, written back into x.
  sf::Tensor ms = k::mean(k::mul(x, x), {-1}, /*keepdim=*/true);
  sf::Tensor inv = k::rsqrt(k::add(ms, sf::Scalar(a[3].to_double())));
  k::copy_(x, k::mul(k::mul(x, inv), w));
  return {a[0]};
}

Results fused_meta(sf::OpContext&, Args a) {
  SF_CHECK(a[1].to_tensor().dim() == 1 && a[1].to_tensor().size(0) == a[0].to_tensor().size(-1),
           "exampleops::fused_all_reduce_rms_norm_: w must be 1-D of x's last size {}, got {}",
           a[0].to_tensor().size(-1), a[1].to_tensor().type_string());
  return {a[0]};
}

Results scaled_copy(sf::OpContext&, Args a) { return {k::mul(a[0].to_tensor(), sf::Scalar(a[1].to_double()))}; }

}  // namespace

SYMMFLOW_LIBRARY(exampleops, m) {
  m.def("fused_all_reduce_rms_norm_(Tensor(a!) x, Tensor w, str group_name, float eps=1e-06) -> Tensor(a!)",
        fused_all_reduce_rms_norm);
  m.register_symm_mem_args("fused_all_reduce_rms_norm_", {"x"});
  m.def("scaled_copy(Tensor x, float s) -> Tensor", scaled_copy);
}

SYMMFLOW_LIBRARY_IMPL(exampleops, Meta, m) {
  m.impl("fused_all_reduce_rms_norm_", fused_meta);
  // The kernels compute types only on meta tensors: the CPU kernel is the Meta one.
  m.impl("scaled_copy", scaled_copy);
}
