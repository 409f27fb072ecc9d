#include "symmflow/core/layout.h"

#include <algorithm>
#include <array>
#include <numeric>
#include <utility>
#include <vector>

#include "symmflow/core/checked.h"

namespace symmflow {

namespace {

// PyTorch's is_contiguous: size-1 dims have any stride, and an empty tensor is
// contiguous whatever its strides (Tensor::is_contiguous does not say so).
bool torch_contiguous(const ViewGeometry& v) {
  if (numel_of(v.sizes) == 0) return true;
  int64_t expected = 1;
  for (size_t i = v.sizes.size(); i-- > 0;) {
    if (v.sizes[i] == 1) continue;
    if (v.strides[i] != expected) return false;
    expected *= v.sizes[i];
  }
  return true;
}

// PyTorch's channels-last order of a 4-d NCHW tensor, innermost first: C, W, H, N.
constexpr std::array<size_t, 4> kChannelsLast{1, 3, 2, 0};

// is_contiguous(memory_format=channels_last), 4-d only (as compute_fast_setup_type asks it).
bool channels_last_contiguous(const ViewGeometry& v) {
  if (v.sizes.size() != 4) return false;
  int64_t expected = 1;
  for (size_t d : kChannelsLast) {
    if (v.sizes[d] == 1) continue;
    if (v.strides[d] != expected) return false;
    expected *= v.sizes[d];
  }
  return true;
}

Shape channels_last_strides(std::span<const int64_t> shape) {
  Shape st(4);
  int64_t acc = 1;
  for (size_t d : kChannelsLast) {
    st[d] = acc;
    acc *= shape[d];
  }
  return st;
}

// Operand v's stride of result dim d once broadcast to `shape`: 0 where v is
// broadcast (a missing leading dim, or size 1 against a larger size). A size-1
// dim of the result keeps the operand's stride, as in PyTorch's compute_strides.
int64_t broadcast_stride(const ViewGeometry& v, std::span<const int64_t> shape, size_t d) {
  const size_t lead = shape.size() - v.sizes.size();
  if (d < lead) return 0;
  if (v.sizes[d - lead] == 1 && shape[d] != 1) return 0;
  return v.strides[d - lead];
}

// TensorIterator's reorder_dimensions: perm[0] is the fastest dim. Insertion sort
// with ambiguous comparisons (0: look further out), exactly as PyTorch sorts, so
// that ties come out the same.
std::vector<size_t> fastest_first(std::span<const int64_t> shape, std::span<const ViewGeometry> operands) {
  const size_t nd = shape.size();
  std::vector<size_t> perm(nd);
  std::iota(perm.rbegin(), perm.rend(), size_t(0));  // n-1, ..., 0: row-major
  // 1: dim0 goes after dim1; -1: before; 0: no operand says.
  auto should_swap = [&](size_t dim0, size_t dim1) {
    for (const ViewGeometry& v : operands) {
      const int64_t s0 = broadcast_stride(v, shape, dim0), s1 = broadcast_stride(v, shape, dim1);
      if (s0 == 0 || s1 == 0) continue;
      if (s0 < s1) return -1;
      if (s0 > s1) return 1;
      if (shape[dim0] > shape[dim1]) return 1;
    }
    return 0;
  };
  for (size_t i = 1; i < nd; ++i) {
    size_t dim1 = i;
    for (size_t dim0 = i; dim0-- > 0;) {
      const int c = should_swap(perm[dim0], perm[dim1]);
      if (c > 0) {
        std::swap(perm[dim0], perm[dim1]);
        dim1 = dim0;
      } else if (c < 0) {
        break;
      }
    }
  }
  return perm;
}

}  // namespace

Shape elementwise_strides(std::span<const int64_t> shape, std::span<const ViewGeometry> operands) {
  bool contiguous = true, channels_last = true, same_shape = true;
  for (const ViewGeometry& v : operands) {
    contiguous = contiguous && torch_contiguous(v);
    channels_last = channels_last && channels_last_contiguous(v);
    same_shape = same_shape && std::equal(v.sizes.begin(), v.sizes.end(), shape.begin(), shape.end());
  }
  if (operands.empty()) return contiguous_strides(shape);
  if (same_shape) {  // PyTorch's fast setup: only for operands of the result's shape
    if (contiguous) return contiguous_strides(shape);
    if (channels_last) return channels_last_strides(shape);
    const ViewGeometry& first = operands.front();
    const bool alike = std::all_of(operands.begin(), operands.end(), [&](const ViewGeometry& v) {
      return is_non_overlapping_and_dense(v) && std::equal(v.strides.begin(), v.strides.end(), first.strides.begin(),
                                                           first.strides.end());
    });
    if (alike) return Shape(first.strides.begin(), first.strides.end());
  }
  const std::vector<size_t> perm = fastest_first(shape, operands);
  bool row_major = true;
  for (size_t i = 0; i < perm.size(); ++i) row_major = row_major && perm[i] == perm.size() - 1 - i;
  if (row_major) return contiguous_strides(shape);
  // allocate_or_resize_outputs: dense in perm's order, an empty dim's stride
  // times 0 (PyTorch's compatible_stride; the result holds no element anyway).
  Shape st(shape.size());
  int64_t acc = 1;
  for (size_t d : perm) {
    st[d] = acc;
    acc = checked_mul(acc, shape[d], [&] { return "the strides of an elementwise result " + shape_to_string(shape); });
  }
  return st;
}

}  // namespace symmflow
