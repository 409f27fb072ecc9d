// softmax / log_softmax along one dim, numerically stable: each row is shifted
// by its max before exp, so large inputs do not overflow.
//   softmax(x)_i     = exp(x_i - m) / sum_j exp(x_j - m)
//   log_softmax(x)_i = (x_i - m) - log(sum_j exp(x_j - m))
// Computed in double for f64 and in float for f32/bf16/f16 (one rounding to the
// output dtype at the end); each row is summed sequentially, so results are
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

}  // namespace symmflow::kernels
