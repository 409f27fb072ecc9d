// Views: ops that return a new Tensor over the SAME storage as their input (only
// sizes, strides and the storage offset change; nothing is copied). Writing
// through a view writes the base. reshape and flatten are the exceptions: they
// view when the strides allow it and otherwise return a contiguous copy, as in
// PyTorch. On a meta tensor every op returns a meta tensor with the view's geometry;
// argument errors are raised all the same.
//
//   Tensor a = Tensor::empty({4, 6});
//   Tensor row = select(a, 0, 1);           // f32[6], a's second row
//   Tensor odd = slice(a, 1, 1, {}, 2);     // f32[4, 3], columns 1, 3, 5
//   Tensor at = transpose(a, 0, 1);         // f32[6, 4], strides [1, 6]
//   Tensor v = view(a, {2, -1});            // f32[2, 12]
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "symmflow/core/tensor.h"

namespace symmflow::kernels {

// `shape` may hold one -1 (inferred). Errors when the element counts differ or
// when t's strides cannot express the new shape (PyTorch's view rule: each group
// of merged or split dims must be contiguous within itself).
Tensor view(const Tensor& t, const Shape& shape);
// view() when possible, else a contiguous copy viewed at `shape`.
Tensor reshape(const Tensor& t, const Shape& shape);
// Elements start, start+step, ... < end along dim. Missing start is 0, missing
// end is the size; negative bounds count from the end; out-of-range bounds clamp
// (PyTorch). step must be positive.
Tensor slice(const Tensor& t, int64_t dim, std::optional<int64_t> start = std::nullopt,
             std::optional<int64_t> end = std::nullopt, int64_t step = 1);
// Index `index` of dim (negative counts from the end); the dim is removed.
Tensor select(const Tensor& t, int64_t dim, int64_t index);
// [start, start+length) along dim; start may be negative; no clamping.
Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t length);
Tensor transpose(const Tensor& t, int64_t dim0, int64_t dim1);
// transpose(0, 1) for a 2-D tensor; 0-D and 1-D tensors come back as aliases.
Tensor t(const Tensor& self);
// dims is a permutation of [0, ndim) (negative dims allowed).
Tensor permute(const Tensor& t, const Shape& dims);
// Broadcasts size-1 dims (stride 0) and prepends new leading dims; -1 keeps a size.
Tensor expand(const Tensor& t, const Shape& sizes);
// Inserts a size-1 dim at `dim` in [-(ndim+1), ndim].
Tensor unsqueeze(const Tensor& t, int64_t dim);
// Drops every size-1 dim / the given dim if its size is 1.
Tensor squeeze(const Tensor& t);
Tensor squeeze(const Tensor& t, int64_t dim);
// Merges dims [start_dim, end_dim] into one (a reshape: may copy). 0-D -> [1].
Tensor flatten(const Tensor& t, int64_t start_dim = 0, int64_t end_dim = -1);
// A new handle with the same geometry over the same storage.
Tensor alias(const Tensor& t);
// Arbitrary geometry over t's storage; offset defaults to t's own offset. Negative
// strides are an error (as PyTorch), on meta tensors too.
Tensor as_strided(const Tensor& t, const Shape& sizes, const Shape& strides,
                  std::optional<int64_t> storage_offset = std::nullopt);

// Consecutive narrow() views along dim, each `split_size` long (the last one
// shorter): split(f32[3, 5], 2, 1) -> f32[3, 2], f32[3, 2], f32[3, 1]. A size
// larger than the dim gives one view; 0 only splits an empty dim (PyTorch).
std::vector<Tensor> split(const Tensor& t, int64_t split_size, int64_t dim = 0);
// Views of the given lengths, which must be >= 0 and sum to the dim's size.
std::vector<Tensor> split_with_sizes(const Tensor& t, const Shape& split_sizes, int64_t dim = 0);
// split() into ceil(size / chunks)-long views: at most `chunks` of them (fewer when
// the sizes do not come out even: chunk(f32[4], 3) gives 2 views of 2), PyTorch's rule.
std::vector<Tensor> chunk(const Tensor& t, int64_t chunks, int64_t dim = 0);
// One select() view per index along dim (q, k, v = qkv.unbind(0)); t has 1+ dims.
std::vector<Tensor> unbind(const Tensor& t, int64_t dim = 0);

// Helpers shared by other kernels.
// Replaces a -1 in shape by the inferred size; errors name the shape and numel.
Shape infer_size(const Shape& shape, int64_t numel);
// Strides for viewing (sizes, strides) as new_sizes without a copy, or nullopt
// (PyTorch's computeStride).
std::optional<Shape> view_strides(const Shape& sizes, const Shape& strides,
                                  const Shape& new_sizes);

}  // namespace symmflow::kernels
