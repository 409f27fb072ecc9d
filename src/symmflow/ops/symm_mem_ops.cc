// symm_mem:: — symmetric-memory collectives with PyTorch's schemas, the
// `Tensor(a!) -> Tensor(a!)` forms kept as they are (symmflow compiles them; see
// seeds/001). Each op declares the arguments that must live in symmetric memory
// (seeds/003): the compiler places exactly those buffers in the symmetric arena.
// Schemas, Meta kernels and symmetric args here; CPU kernels come from the runtime.
#include "symmflow/library/library.h"
#include "symmflow/ops/meta_util.h"

namespace symmflow::ops {
namespace {

using Args = std::span<const IValue>;
using Out = std::vector<IValue>;

Out reduce_like_first(OpContext&, Args a) {
  check_reduce_op(a[1].to_string(), "symm_mem all_reduce");
  return {empty_like(a[0].to_tensor())};
}
Out reduce_inplace(OpContext&, Args a) {
  check_reduce_op(a[1].to_string(), "symm_mem all_reduce");
  return {a[0]};
}
Out reduce_out(OpContext&, Args a) {  // (input, reduce_op, group_name, out)
  check_reduce_op(a[1].to_string(), "symm_mem all_reduce");
  const Tensor& in = a[0].to_tensor();
  check_out(a[3].to_tensor(), in.dtype(), in.sizes(), "symm_mem all_reduce_out", "out");
  return {a[3]};
}
Out reduce_copy(OpContext&, Args a) {  // (symm_buffer, local_input, reduce_op, group_name)
  check_reduce_op(a[2].to_string(), "symm_mem::one_shot_all_reduce_copy");
  const Tensor& buf = a[0].to_tensor();
  const Tensor& in = a[1].to_tensor();
  SF_CHECK(buf.dtype() == in.dtype() && buf.numel() >= in.numel(),
           "symm_mem::one_shot_all_reduce_copy: symm_buffer {} cannot hold local_input {}",
           buf.type_string(), in.type_string());
  return {empty_like(in)};
}
Out reduce_copy_out(OpContext& c, Args a) {
  reduce_copy(c, a);
  const Tensor& in = a[1].to_tensor();
  check_out(a[4].to_tensor(), in.dtype(), in.sizes(), "symm_mem::one_shot_all_reduce_copy_out",
            "out");
  return {a[4]};
}
Out gather_out(OpContext&, Args a) {  // (input, group_name, out): out = [W * d0, ...]
  const Tensor& in = a[0].to_tensor();
  const Tensor& out = a[2].to_tensor();
  SF_CHECK(out.dtype() == in.dtype() && in.numel() > 0 && out.numel() % in.numel() == 0,
           "symm_mem all_gather_out: out {} is not a whole number of inputs {}",
           out.type_string(), in.type_string());
  return {a[2]};
}
Out reduce_scatter_out(OpContext&, Args a) {  // (input, group_name, split_last_dim, output)
  const Tensor& in = a[0].to_tensor();
  const Tensor& out = a[3].to_tensor();
  SF_CHECK(out.dtype() == in.dtype() && out.numel() > 0 && in.numel() % out.numel() == 0,
           "symm_mem::reduce_scatter_out: output {} is not a whole share of input {}",
           out.type_string(), in.type_string());
  return {a[3]};
}
Out tile_reduce(OpContext&, Args a) {  // (in_tile, out_tile, root, group_name, reduce_op)
  const Tensor& in = a[0].to_tensor();
  const Tensor& out = a[1].to_tensor();
  check_reduce_op(a[4].to_string(), "symm_mem::tile_reduce");
  check_out(out, in.dtype(), in.sizes(), "symm_mem::tile_reduce", "out_tile");
  return {};
}

}  // namespace

SYMMFLOW_LIBRARY(symm_mem, m) {
  m.def("multimem_all_reduce_(Tensor(a!) input, str reduce_op, str group_name) -> Tensor(a!)");
  m.def("multimem_one_shot_all_reduce(Tensor input, str reduce_op, str group_name) -> Tensor");
  m.def("multimem_one_shot_all_reduce_out(Tensor input, str reduce_op, str group_name, Tensor(a!) out) -> Tensor(a!)");
  m.def("multimem_all_gather_out(Tensor input, str group_name, Tensor(a!) out) -> Tensor(a!)");
  m.def("one_shot_all_reduce(Tensor input, str reduce_op, str group_name) -> Tensor");
  m.def("one_shot_all_reduce_out(Tensor input, str reduce_op, str group_name, Tensor(a!) out) -> Tensor(a!)");
  m.def("one_shot_all_reduce_copy(Tensor symm_buffer, Tensor local_input, str reduce_op, str group_name) -> Tensor");
  m.def("one_shot_all_reduce_copy_out(Tensor symm_buffer, Tensor local_input, str reduce_op, str group_name, Tensor(a!) out) -> Tensor(a!)");
  m.def("two_shot_all_reduce_(Tensor(a!) input, str reduce_op, str group_name) -> Tensor(a!)");
  m.def("two_shot_all_reduce_out(Tensor(a!) input, str reduce_op, str group_name, Tensor(b!) output) -> Tensor(b!)");
  m.def("all_gather_out(Tensor input, str group_name, Tensor(a!) out) -> Tensor(a!)");
  m.def("reduce_scatter_out(Tensor(a!) input, str group_name, bool split_last_dim, Tensor(b!) output) -> Tensor(b!)");
  m.def("tile_reduce(Tensor in_tile, Tensor(a!) out_tile, int root, str group_name, str reduce_op='sum') -> ()");

  // Which buffers peers access directly. For the all-reduces it is the input
  // (peers read it); multimem_all_gather_out writes through the multicast `out`.
  m.register_symm_mem_args("multimem_all_reduce_", {"input"});
  m.register_symm_mem_args("multimem_one_shot_all_reduce", {"input"});
  m.register_symm_mem_args("multimem_one_shot_all_reduce_out", {"input"});
  m.register_symm_mem_args("multimem_all_gather_out", {"out"});
  m.register_symm_mem_args("one_shot_all_reduce", {"input"});
  m.register_symm_mem_args("one_shot_all_reduce_out", {"input"});
  m.register_symm_mem_args("one_shot_all_reduce_copy", {"symm_buffer"});
  m.register_symm_mem_args("one_shot_all_reduce_copy_out", {"symm_buffer"});
  m.register_symm_mem_args("two_shot_all_reduce_", {"input"});
  m.register_symm_mem_args("two_shot_all_reduce_out", {"input"});
  m.register_symm_mem_args("all_gather_out", {"input"});
  m.register_symm_mem_args("reduce_scatter_out", {"input"});
  m.register_symm_mem_args("tile_reduce", {"in_tile"});
}

SYMMFLOW_LIBRARY_IMPL(symm_mem, Meta, m) {
  m.impl("multimem_all_reduce_", reduce_inplace);
  m.impl("multimem_one_shot_all_reduce", reduce_like_first);
  m.impl("multimem_one_shot_all_reduce_out", reduce_out);
  m.impl("multimem_all_gather_out", gather_out);
  m.impl("one_shot_all_reduce", reduce_like_first);
  m.impl("one_shot_all_reduce_out", reduce_out);
  m.impl("one_shot_all_reduce_copy", reduce_copy);
  m.impl("one_shot_all_reduce_copy_out", reduce_copy_out);
  m.impl("two_shot_all_reduce_", reduce_inplace);
  m.impl("two_shot_all_reduce_out", reduce_out);
  m.impl("all_gather_out", gather_out);
  m.impl("reduce_scatter_out", reduce_scatter_out);
  m.impl("tile_reduce", tile_reduce);
}

}  // namespace symmflow::ops
