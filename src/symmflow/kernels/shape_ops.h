// Joining tensors: cat along an existing dim, stack along a new one. The output
// dtype is the promotion of every input dtype (PyTorch's result_type); inputs are
// converted while they are copied. Rearranging one: repeat (tiling), flip, roll,
// constant_pad_nd.
// On any meta input the output is meta.
//
//   Tensor c = cat({a, b}, 1);      // f32[2, 3] ++ f32[2, 5] -> f32[2, 8]
//   Tensor s = stack({a, a}, 0);    // f32[2, 3] x2 -> f32[2, 2, 3]
#pragma once
#include <cstdint>
#include <vector>

#include "symmflow/core/scalar.h"
#include "symmflow/core/tensor.h"

namespace symmflow::kernels {

// Shapes must agree except along dim. As PyTorch's legacy rule, 1-D tensors of
// size 0 are skipped (they may have any other shape); 0-D tensors are an error.
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
// Every tensor must have the same shape; dim is in [-(ndim+1), ndim].
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);

// repeat: self tiled repeats[d] times along each dim; repeats has at least
// self.dim() entries (self gains leading dims of size 1 for the others).
Tensor repeat(const Tensor& self, const Shape& repeats);
// flip: the order of the elements along each of dims reversed (a dim at most once).
Tensor flip(const Tensor& self, const Shape& dims);
// roll: elements shifted by shifts[i] along dims[i], wrapping around; without dims,
// over the flattened tensor (one shift). shifts and dims have the same length.
Tensor roll(const Tensor& self, const Shape& shifts, const Shape& dims = {});

// constant_pad_nd (F.pad): pad = [before_last, after_last, before_2nd_last, ...],
// at most two per dim; negative amounts crop. The new cells hold `value`, which
// must fit self's dtype (fill_'s check).
Tensor constant_pad_nd(const Tensor& self, const Shape& pad, const Scalar& value = 0);

}  // namespace symmflow::kernels
