// Comparisons (eq, ne, lt, le, gt, ge): inputs compared in their promoted dtype
// (bf16/f16 in float, exactly), result bool.
#include "symmflow/kernels/pointwise.h"
#include "symmflow/kernels/pointwise_impl.h"

namespace symmflow::kernels {

using namespace pointwise_detail;

namespace {

template <typename F>
Tensor compare(std::string_view op, Dest dest, Operand a, Operand b) {
  return binary<kAllTypes>({op}, dest, a, b, [](auto) { return F{}; });
}

}  // namespace

#define SF_DEFINE_COMPARE(name, F)                                                         \
  Tensor name(const Tensor& a, const Tensor& b) {                                          \
    return compare<functors::F>(#name, Dest::fresh(), a, b);                               \
  }                                                                                        \
  Tensor name(const Tensor& a, const Scalar& b) {                                          \
    return compare<functors::F>(#name, Dest::fresh(), a, b);                               \
  }                                                                                        \
  const Tensor& name##_out(const Tensor& out, const Tensor& a, const Tensor& b) {          \
    compare<functors::F>(#name "_out", Dest::into(out), a, b);                             \
    return out;                                                                            \
  }                                                                                        \
  const Tensor& name##_out(const Tensor& out, const Tensor& a, const Scalar& b) {          \
    compare<functors::F>(#name "_out", Dest::into(out), a, b);                             \
    return out;                                                                            \
  }
SF_POINTWISE_COMPARE_OPS(SF_DEFINE_COMPARE)
#undef SF_DEFINE_COMPARE

}  // namespace symmflow::kernels
