// Selection by integer index tensors: index_select (one dim), index (x[idx],
// PyTorch's advanced indexing with integer tensors) and gather (per element).
//
//   Tensor rows = index_select(x, 0, ids);          // x f32[V, D], ids i64[n] -> f32[n, D]
//   Tensor last = index(h, {arange(B), lens - 1});  // h [B, T, D] -> [B, D]
//   Tensor picked = gather(logp, 1, target.unsqueeze(1));
//
// index_select: index is 0-dim or 1-D, i64 or i32; an index outside [0, size) is
// an error, negatives included (PyTorch's CPU check). index: the tensors (i64)
// broadcast together; None entries keep their dim; the result's indexed dims sit
// where the index tensors are when those are adjacent, first otherwise. Negative
// indices count from the end; out of range is an error. Bool masks are refused
// (their result size depends on the data; PyTorch takes them). gather: index (i64)
// has self's number of dims and no larger a size than self outside `dim`;
// out[i][j] = self[index[i][j]][j] for dim 0. Every dtype; results are contiguous
// copies; meta inputs give meta results. Errors name the op.
#pragma once
#include <optional>
#include <vector>

#include "symmflow/core/tensor.h"

namespace symmflow::kernels {

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index);
Tensor index(const Tensor& self, const std::vector<std::optional<Tensor>>& indices);
Tensor gather(const Tensor& self, int64_t dim, const Tensor& index);

// The values of an i64 (or, with allow_i32, i32) index tensor, row-major.
std::vector<int64_t> index_values(const char* op, const Tensor& index, bool allow_i32);
// out[o, i, :] = src[o, rows[i], :] for the contiguous src viewed as [outer, n_src,
// row_bytes] (the mechanism of index_select and embedding). Each row is checked to
// be in [0, n_src): `what` says what a bad one is ("index out of range in self").
void take_rows(const char* op, const char* what, const int64_t* rows, int64_t n, const char* src,
               int64_t outer, int64_t n_src, int64_t row_bytes, char* out);

}  // namespace symmflow::kernels
