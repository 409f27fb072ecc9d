#include "symmflow/kernels/layer_norm.h"

#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "symmflow/kernels/copy.h"
#include "symmflow/kernels/simd.h"
#include "symmflow/kernels/sum_order.h"

namespace symmflow::kernels {
namespace {

// PyTorch's _check_layer_norm_inputs, its messages.
void check_inputs(const Tensor& x, const Shape& shape, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias) {
  SF_CHECK(!shape.empty(),
           "native_layer_norm: Expected normalized_shape to be at least 1-dimensional, i.e., "
           "containing at least one element, but got normalized_shape = {}",
           shape_to_string(shape));
  for (auto [t, name] : {std::pair{&weight, "weight"}, std::pair{&bias, "bias"}}) {
    if (!*t || !(*t)->defined()) continue;
    SF_CHECK((*t)->sizes() == shape,
             "native_layer_norm: Expected {} to be of same shape as normalized_shape, but got {} "
             "of shape {} and normalized_shape = {}",
             name, name, shape_to_string((*t)->sizes()), shape_to_string(shape));
    SF_CHECK((*t)->dtype() == x.dtype(), "native_layer_norm: expected {} of dtype {} like the input, got {}",
             name, dtype_name(x.dtype()), (*t)->type_string());
  }
  const int64_t nd = int64_t(shape.size());
  bool ok = x.dim() >= nd;
  for (int64_t i = 0; ok && i < nd; ++i) ok = x.sizes()[size_t(x.dim() - nd + i)] == shape[size_t(i)];
  SF_CHECK(ok, "native_layer_norm: Given normalized_shape={}, expected input with shape [*, {}], but got input of size{}",
           shape_to_string(shape), fmt::join(shape, ", "), shape_to_string(x.sizes()));
  SF_CHECK(is_floating(x.dtype()), "native_layer_norm: \"LayerNormKernelImpl\" not implemented for {}",
           x.type_string());
}

// Rows of n contiguous elements: x, y [rows, n]; w, b [n] or null; mean, rstd [rows].
// Two passes over a compute-type copy of the row: the mean, then the squared
// deviations, each an ordered sum (sum_order.h: fixed and vectorized).
template <typename T>
void layer_norm_rows(const T* x, const T* w, const T* b, T* y, T* mean, T* rstd, int64_t rows,
                     int64_t n, double eps) {
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
  std::vector<C> row(static_cast<size_t>(n)), dev(static_cast<size_t>(n));
  // Each row in AVX2 where the CPU has it (simd.h: the same bits).
  for (int64_t r = 0; r < rows; ++r) simd::run([&] {
    const T* xr = x + r * n;
    T* yr = y + r * n;
    for (int64_t i = 0; i < n; ++i) row[i] = C(xr[i]);
    const C sum = ordered_sum_here(row.data(), n);
    // A row holding +-inf: PyTorch's Welford pass gives mean NaN (inf - inf), not inf.
    const C m = n == 0 ? C(0) : std::isinf(sum) ? std::numeric_limits<C>::quiet_NaN() : sum / C(n);
    for (int64_t i = 0; i < n; ++i) dev[i] = (row[i] - m) * (row[i] - m);
    const C var = n == 0 ? std::numeric_limits<C>::quiet_NaN() : ordered_sum_here(dev.data(), n) / C(n);
    const C rs = C(1) / std::sqrt(var + C(eps));
    const C scale = rs, shift = -rs * m;
    // (x * scale + shift) * w + b; a missing w is 1 and b is 0, which change no bits.
    for (int64_t i = 0; i < n; ++i) row[i] = row[i] * scale + shift;
    if (w != nullptr)
      for (int64_t i = 0; i < n; ++i) row[i] = row[i] * C(w[i]);
    if (b != nullptr)
      for (int64_t i = 0; i < n; ++i) row[i] = row[i] + C(b[i]);
    for (int64_t i = 0; i < n; ++i) yr[i] = T(row[i]);
    mean[r] = T(m);
    rstd[r] = T(rs);
  });
}

}  // namespace

LayerNormResult native_layer_norm(const Tensor& input, const Shape& normalized_shape,
                                  const std::optional<Tensor>& weight,
                                  const std::optional<Tensor>& bias, double eps) {
  check_inputs(input, normalized_shape, weight, bias);
  const size_t axis = size_t(input.dim()) - normalized_shape.size();
  Shape stat = input.sizes();
  for (size_t d = axis; d < stat.size(); ++d) stat[d] = 1;
  const DType dt = input.dtype();
  auto given = [](const std::optional<Tensor>& t) { return t && t->defined(); };
  const bool meta = input.is_meta() || (given(weight) && weight->is_meta()) || (given(bias) && bias->is_meta());
  if (meta) return {Tensor::meta(input.sizes(), dt), Tensor::meta(stat, dt), Tensor::meta(stat, dt)};
  const int64_t n = numel_of(normalized_shape);
  const int64_t rows = numel_of(stat);
  Tensor x = contiguous(input);
  Tensor w = given(weight) ? contiguous(*weight) : Tensor();
  Tensor b = given(bias) ? contiguous(*bias) : Tensor();
  LayerNormResult r{Tensor::empty(input.sizes(), dt), Tensor::empty(stat, dt), Tensor::empty(stat, dt)};
  SF_DISPATCH(dt, {
    if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, BFloat16> || std::is_same_v<T, Half>) {
      layer_norm_rows<T>(x.data<T>(), w.defined() ? w.data<T>() : nullptr,
                         b.defined() ? b.data<T>() : nullptr, r.out.data<T>(), r.mean.data<T>(),
                         r.rstd.data<T>(), rows, n, eps);
    }
  });
  return r;
}

}  // namespace symmflow::kernels
