// Layer normalization over the trailing dims, as PyTorch's native_layer_norm:
//   y = (x - mean) * rstd * weight + bias,   rstd = 1 / sqrt(var + eps)
// with mean and the biased variance taken over the last normalized_shape.size()
// dims of each row. Also returns mean and rstd, shaped like the input with the
// normalized dims set to 1 (f32[2, 3, 4] over [4] -> f32[2, 3, 1]), in the input's
// dtype (PyTorch 1.13).
//
// Numerics, as PyTorch's CPU kernel (LayerNormKernelImpl): f64 in double; f32,
// bf16 and f16 in float (rounded once to the dtype at the end), y computed as
// (x * rstd + (-rstd * mean)) * weight + bias. PyTorch takes mean and variance in
// one Welford pass; this kernel takes two passes (sum, then squared deviations),
// each in sum_order.h's fixed order, which can differ from PyTorch's in the last bits. A row whose sum
// is +-inf has mean NaN, as Welford's gives for a row holding +-inf (a row of
// finite values whose float sum overflows is NaN here, finite in PyTorch). An
// empty row has mean 0 and rstd NaN, as PyTorch's.
//
//   auto [y, mean, rstd] = native_layer_norm(x, {x.size(-1)}, w, b, 1e-5);
#pragma once
#include <optional>

#include "symmflow/core/tensor.h"

namespace symmflow::kernels {

struct LayerNormResult {
  Tensor out, mean, rstd;
};

// weight and bias, when given, have exactly normalized_shape and the input's dtype;
// the input is floating (integers are an error, as in PyTorch). On a meta input
// the results are meta.
LayerNormResult native_layer_norm(const Tensor& input, const Shape& normalized_shape,
                                  const std::optional<Tensor>& weight,
                                  const std::optional<Tensor>& bias, double eps);

}  // namespace symmflow::kernels
