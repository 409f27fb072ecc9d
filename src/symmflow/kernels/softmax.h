// softmax / log_softmax along one dim, numerically stable: each row is shifted
// by its max before exp, so large inputs do not overflow.
//   softmax(x)_i     = exp(x_i - m) / sum_j exp(x_j - m)
//   log_softmax(x)_i = (x_i - m) - log(sum_j exp(x_j - m))
// Computed in double for f64 and in float for f32/bf16/f16 (one rounding to the
// output dtype at the end); exp is SLEEF's (vec_math.h, as PyTorch's vectorized
// kernel) and each row is summed in sum_order.h's fixed order, so results are
// deterministic. Input and output dtype must be floating. On a meta input the
// output is meta.
//
//   Tensor p = softmax(logits, -1);                 // rows sum to 1
//   Tensor lp = log_softmax(logits_bf16, -1, DType::f32);
#pragma once
#include <cstdint>
#include <optional>

#include "symmflow/core/tensor.h"

namespace symmflow::kernels {

// dtype: the output dtype (the input is converted to it first, as PyTorch).
Tensor softmax(const Tensor& t, int64_t dim, std::optional<DType> dtype = std::nullopt);
Tensor log_softmax(const Tensor& t, int64_t dim, std::optional<DType> dtype = std::nullopt);

// logsumexp over dims (empty: all), as PyTorch 1.13 spells it: m = amax(x) with
// infinite maxima replaced by 0, log(sum(exp(x - m))) + m, each step an op of its
// own (so a bf16 input rounds where PyTorch's does). Integer and bool inputs
// become f32; over zero elements the result is -inf. An empty dim list on a tensor
// of 1+ dims without keepdim is refused, as 1.13 (it cannot add the kept maxima).
Tensor logsumexp(const Tensor& t, const Shape& dims, bool keepdim = false);

}  // namespace symmflow::kernels
