// Embedding lookup: row indices[...] of weight, so out[..., :] = weight[indices[...], :].
//
//   Tensor ids = ...;                       // i64[B, T]
//   Tensor h = embedding(table, ids);       // table f32[V, D] -> f32[B, T, D]
//
// weight is 2-D, of any dtype; indices are i32 or i64 of any shape (0-dim gives
// one row). An index outside [0, V) is an error when the op runs ("index out of
// range in self", as PyTorch: negative indices do not count from the end). The
// rows are copied bit for bit. padding_idx only affects PyTorch's gradient, so the
// forward result ignores it. On meta inputs the result is meta.
#pragma once
#include "symmflow/core/tensor.h"

namespace symmflow::kernels {

Tensor embedding(const Tensor& weight, const Tensor& indices);

}  // namespace symmflow::kernels
