// Masks: masked_fill (attention's causal mask) and triu/tril (which build it).
//
//   Tensor causal = triu(ones({T, T}, DType::boolean), 1);     // above the diagonal
//   Tensor s = masked_fill(scores, causal, -INFINITY);         // scores [B, H, T, T]
//
// masked_fill(self, mask, value): value where mask is true, self elsewhere; self and
// the bool mask broadcast together and the result keeps self's dtype (the value is
// converted to it: it must fit, as fill_'s; 1.5 into an integer truncates, NaN into
// one is an error, as PyTorch). masked_fill_ writes self, whose shape must be the
// broadcast shape. A tensor value must be 0-dim. PyTorch 1.13 also takes integer
// masks (deprecated); 2.x refuses them, and so does symmflow.
//
// triu(self, k) keeps the elements with col - row >= k of the last two dims and
// zeroes the rest; tril keeps col - row <= k. self has >= 2 dims, any dtype; the
// result is a new contiguous tensor. On meta inputs every op returns meta.
#pragma once
#include <cstdint>

#include "symmflow/core/scalar.h"
#include "symmflow/core/tensor.h"

namespace symmflow::kernels {

Tensor masked_fill(const Tensor& self, const Tensor& mask, const Scalar& value);
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value);
const Tensor& masked_fill_(const Tensor& self, const Tensor& mask, const Scalar& value);
const Tensor& masked_fill_(const Tensor& self, const Tensor& mask, const Tensor& value);

Tensor triu(const Tensor& self, int64_t diagonal = 0);
Tensor tril(const Tensor& self, int64_t diagonal = 0);

}  // namespace symmflow::kernels
