#include "symmflow/kernels/softmax.h"

#include <cmath>
#include <type_traits>
#include <vector>

#include "symmflow/kernels/copy.h"
#include "symmflow/kernels/factories.h"
#include "symmflow/kernels/lane_extreme.h"
#include "symmflow/kernels/pointwise.h"
#include "symmflow/kernels/reduce.h"
#include "symmflow/kernels/simd.h"
#include "symmflow/kernels/sum_order.h"
#include "symmflow/kernels/vec_math.h"
#include "symmflow/kernels/views.h"

namespace symmflow::kernels {
namespace {

template <typename T, bool kLog>
void softmax_kernel(const Tensor& x, int64_t dim, const Tensor& out) {
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
  // x and out are both contiguous with the same shape: one offset serves both.
  Shape sizes = x.sizes(), strides = x.strides();
  if (sizes.empty()) sizes = strides = {1};
  const int64_t n = sizes[dim], stride = strides[dim];
  sizes.erase(sizes.begin() + dim);
  strides.erase(strides.begin() + dim);
  const T* in = static_cast<const T*>(x.data_ptr());
  T* o = static_cast<T*>(out.data_ptr());
  std::vector<C> row(size_t(std::max<int64_t>(n, 0))), ex;
  if (n == 0) return;
  // Each row in AVX2 where the CPU has it (simd.h): the max, exp(x - max) through
  // SLEEF (as PyTorch's vectorized kernel), the row sum in sum_order.h's order,
  // and PyTorch's scale (softmax: times 1 / sum; log_softmax: minus log(sum)).
  for_each_offset(sizes, strides, 0, [&](int64_t base) {
    simd::run([&] {
      if (stride == 1)  // the usual last-dim row: a vectorized copy
        for (int64_t i = 0; i < n; ++i) row[i] = C(in[base + i]);
      else
        for (int64_t i = 0; i < n; ++i) row[i] = C(in[base + i * stride]);
      const C m = row_extreme_here<true>(row.data(), n);
      for (int64_t i = 0; i < n; ++i) row[i] -= m;
      if constexpr (kLog) {
        ex.assign(row.begin(), row.end());
        vec::map(vec::Fn::exp, ex.data(), ex.data(), n);
        const C ls = std::log(ordered_sum_here(ex.data(), n));
        for (int64_t i = 0; i < n; ++i) o[base + i * stride] = T(row[i] - ls);
      } else {
        vec::map(vec::Fn::exp, row.data(), row.data(), n);
        const C r = C(1) / ordered_sum_here(row.data(), n);
        for (int64_t i = 0; i < n; ++i) o[base + i * stride] = T(row[i] * r);
      }
    });
  });
}

template <bool kLog>
Tensor run(const char* op, const Tensor& t, int64_t dim, std::optional<DType> dtype) {
  const DType out_dt = dtype.value_or(t.dtype());
  SF_CHECK(is_floating(out_dt), "{}: expected a floating-point input or dtype, got {}{}", op,
           t.type_string(), dtype ? fmt::format(" with dtype {}", dtype_name(*dtype)) : "");
  const int64_t d = wrap_dim(dim, t.dim());
  if (t.is_meta()) return Tensor::meta(t.sizes(), out_dt);
  Tensor x = t.dtype() == out_dt ? contiguous(t) : to_dtype(t, out_dt);
  Tensor out = Tensor::empty(t.sizes(), out_dt);
  switch (out_dt) {
    case DType::f32: softmax_kernel<float, kLog>(x, d, out); break;
    case DType::f64: softmax_kernel<double, kLog>(x, d, out); break;
    case DType::bf16: softmax_kernel<BFloat16, kLog>(x, d, out); break;
    case DType::f16: softmax_kernel<Half, kLog>(x, d, out); break;
    default: break;
  }
  return out;
}

}  // namespace

Tensor softmax(const Tensor& t, int64_t dim, std::optional<DType> dtype) {
  return run<false>("softmax", t, dim, dtype);
}

Tensor log_softmax(const Tensor& t, int64_t dim, std::optional<DType> dtype) {
  return run<true>("log_softmax", t, dim, dtype);
}

Tensor logsumexp(const Tensor& t, const Shape& dims, bool keepdim) {
  const Tensor x = is_floating(t.dtype()) ? t : to_dtype(t, DType::f32);
  const Shape out = reduced_shape("logsumexp", x.sizes(), dims, keepdim);
  // PyTorch 1.13 adds the [1, ..., 1] maxima to the [] sum and refuses.
  SF_CHECK(!dims.empty() || keepdim || x.dim() == 0,
           "logsumexp: output with shape [] doesn't match the broadcast shape {} (an empty dim list, as "
           "PyTorch 1.13)", shape_to_string(Shape(size_t(x.dim()), 1)));
  if (x.numel() == 0) return full(out, -INFINITY, x.dtype(), x.is_meta());
  Tensor m = amax(x, dims, true);
  m = where(eq(abs(m), INFINITY), Scalar(0.0), m);
  return add(log(sum(exp(sub(x, m)), dims, keepdim)), reshape(m, out));
}

}  // namespace symmflow::kernels
