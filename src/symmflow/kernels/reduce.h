// Reductions over a set of dims: sum, mean, amax, amin, var/std; max/min with
// their indices over one dim, argmax/argmin; norm; any/all; cumsum (a scan). `dims` empty means every
// dim; negative dims count from the end; keepdim leaves the reduced dims as size 1.
// The input may be any strided view. On a meta input the output is a meta tensor.
//
// Determinism: each output element is reduced over its inputs in row-major order
// of the reduced dims, in a fixed summation order, so the same input always gives
// bitwise the same result whatever the layout (and in eager and compiled runs, on
// every rank). Accumulators, by output dtype, as PyTorch: f64 in double; f32, bf16
// and f16 in float (so an f32 sum overflows to inf where PyTorch's does; bf16/f16
// round once at the end); floating sums follow sum_order.h (32 lanes, each a
// cascade of 128-element blocks, the lanes folded in halves: vectorized, with a
// small rounding error); integers and bool in i64 (wrapping). mean is the sum
// divided by the count in the accumulator's type.
//
//   Tensor x = ...;                           // f32[2, 3, 4]
//   Tensor s = sum(x, {0, -1});               // f32[3]
//   Tensor m = mean(x, {1}, /*keepdim=*/true); // f32[2, 1, 4]
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <utility>

#include "symmflow/core/tensor.h"

namespace symmflow::kernels {

// dtype: the output dtype (the input is converted to it first). Default: the
// input dtype for floating inputs, i64 for integer and bool inputs (PyTorch).
Tensor sum(const Tensor& t, const Shape& dims = {}, bool keepdim = false,
           std::optional<DType> dtype = std::nullopt);
// Floating inputs only (or a floating dtype); an integer input is an error, as in
// PyTorch. The mean of an empty reduction is NaN.
Tensor mean(const Tensor& t, const Shape& dims = {}, bool keepdim = false,
            std::optional<DType> dtype = std::nullopt);
// Max / min, same dtype as the input; NaN propagates. A reduction over zero
// elements is an error.
Tensor amax(const Tensor& t, const Shape& dims = {}, bool keepdim = false);
Tensor amin(const Tensor& t, const Shape& dims = {}, bool keepdim = false);

// max.dim / min.dim: the extreme over `dim` and the index of its first occurrence
// (i64). NaN wins, at its first index; -0.0 and 0.0 tie (the first stays), as
// PyTorch's CPU kernel. Every dtype, bool included; a 0-dim input reduces over
// dim 0 or -1 to itself, index 0. A reduced dim of size 0 is an error.
struct ValuesIndices {
  Tensor values, indices;
};
ValuesIndices max_dim(const Tensor& t, int64_t dim, bool keepdim = false);
ValuesIndices min_dim(const Tensor& t, int64_t dim, bool keepdim = false);
// argmax / argmin: max_dim's indices; without a dim, the index into the flattened
// input (keepdim then keeps every dim as size 1). bool is refused (PyTorch 1.13's
// "argmax_cpu" not implemented for 'Bool'); so is an empty input without a dim.
Tensor argmax(const Tensor& t, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& t, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);

// var / std (the correction overloads): sum((x - mean)^2) / max(0, N - correction),
// correction 1 when not given; floating inputs only, result in the input dtype.
// Two passes (mean, then squared deviations), accumulated in double, rounded once:
// PyTorch's single Welford pass may differ in the last bits. N - correction <= 0
// gives inf (or NaN when every deviation is 0, and for N == 0), as PyTorch.
Tensor var(const Tensor& t, const Shape& dims = {}, std::optional<int64_t> correction = std::nullopt,
           bool keepdim = false);
Tensor std_dev(const Tensor& t, const Shape& dims = {}, std::optional<int64_t> correction = std::nullopt,
               bool keepdim = false);
// var_mean / std_mean: (var or std, mean), from the same two passes.
std::pair<Tensor, Tensor> var_mean(const Tensor& t, const Shape& dims = {},
                                   std::optional<int64_t> correction = std::nullopt, bool keepdim = false);
std::pair<Tensor, Tensor> std_mean(const Tensor& t, const Shape& dims = {},
                                   std::optional<int64_t> correction = std::nullopt, bool keepdim = false);

// norm (norm.ScalarOpt_dim): the vector p-norm over dims (empty: all); p
// defaults to 2; 0 counts nonzeros, inf / -inf take the largest / smallest |x|
// (NaN propagates). Floating inputs only, result in the input dtype, accumulated
// as PyTorch's CPU kernel: f64 in double, f32/bf16/f16 in float (so a square past
// float's range is inf, as there). inf/-inf over zero elements is an error.
Tensor norm(const Tensor& t, std::optional<double> p, const Shape& dims = {}, bool keepdim = false);

// topk: the k largest (or smallest) elements along dim with their indices, in
// order (NaN counts as the largest); equal values keep their index order (PyTorch
// leaves ties unordered). k must be in [0, size]. Every dtype but bool.
ValuesIndices topk(const Tensor& t, int64_t k, int64_t dim = -1, bool largest = true);

// any / all: whether some / every element is nonzero (NaN counts), bool result;
// over zero elements any is false and all is true. Every dtype.
Tensor any(const Tensor& t, const Shape& dims = {}, bool keepdim = false);
Tensor all(const Tensor& t, const Shape& dims = {}, bool keepdim = false);

// cumsum: the running sum along `dim` (same shape). dtype as sum's (the input is
// converted to it first; default: floating stays, integers and bool become i64);
// floating sums run in double (PyTorch's CPU accumulator for f32), each prefix
// rounded once; integers in i64 (wrapping).
Tensor cumsum(const Tensor& t, int64_t dim, std::optional<DType> dtype = std::nullopt);

// The output shape of reducing `sizes` over `dims` (validated; errors name `op`).
Shape reduced_shape(const char* op, const Shape& sizes, const Shape& dims, bool keepdim);

// Calls fn(offset) for every element of the geometry (sizes, strides), in
// row-major order; offsets are in elements, starting at `base`. Not core's
// for_each_run: the reductions call it once per kept element (nested walks over
// a handful of elements), where coalescing would cost more than it saves.
template <typename F>
void for_each_offset(std::span<const int64_t> sizes, std::span<const int64_t> strides,
                     int64_t base, F&& fn) {
  const size_t dims = sizes.size();
  for (int64_t s : sizes)
    if (s == 0) return;
  if (dims == 0) {
    fn(base);
    return;
  }
  std::vector<int64_t> idx(dims, 0);
  const int64_t inner = sizes[dims - 1], inner_stride = strides[dims - 1];
  int64_t off = base;
  while (true) {
    for (int64_t i = 0; i < inner; ++i) fn(off + i * inner_stride);
    size_t d = dims - 1;
    while (true) {
      if (d == 0) return;
      --d;
      if (++idx[d] < sizes[d]) {
        off += strides[d];
        break;
      }
      off -= strides[d] * (sizes[d] - 1);
      idx[d] = 0;
    }
  }
}

}  // namespace symmflow::kernels
