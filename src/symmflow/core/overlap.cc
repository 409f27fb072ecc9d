#include "symmflow/core/overlap.h"

#include <algorithm>
#include <numeric>
#include <utility>
#include <vector>

namespace symmflow {

namespace {

// [first, last) byte range touched by a non-empty view (negative strides included).
std::pair<const char*, const char*> byte_extent(const Tensor& t) {
  const char* p = static_cast<const char*>(t.data_ptr());
  int64_t lo = 0, hi = 0;
  for (int64_t d = 0; d < t.dim(); ++d) {
    const int64_t span = (t.sizes()[d] - 1) * t.strides()[d] * int64_t(t.itemsize());
    (span < 0 ? lo : hi) += span;
  }
  return {p + lo, p + hi + int64_t(t.itemsize())};
}

}  // namespace

bool is_non_overlapping_and_dense(const Tensor& t) {
  if (t.numel() == 0 || t.is_contiguous()) return true;
  const Shape& sizes = t.sizes();
  const Shape& strides = t.strides();
  if (t.dim() == 1) return sizes[0] < 2 || strides[0] == 1;
  // Sort the dims by stride, size-1 dims last (PyTorch's compute_non_overlapping_and_dense).
  std::vector<int64_t> perm(size_t(t.dim()));
  std::iota(perm.begin(), perm.end(), int64_t(0));
  std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
    if (sizes[a] < 2) return false;
    if (sizes[b] < 2) return true;
    return strides[a] < strides[b];
  });
  int64_t require = 1;
  for (int64_t d : perm) {
    if (sizes[d] < 2) return true;
    if (strides[d] != require) return false;
    require *= sizes[d];
  }
  return true;
}

InternalOverlap internal_overlap(const Tensor& t) {
  if (is_non_overlapping_and_dense(t)) return InternalOverlap::no;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.strides()[d] == 0 && t.sizes()[d] > 1) return InternalOverlap::yes;
  return InternalOverlap::too_hard;
}

Overlap overlap_status(const Tensor& a, const Tensor& b) {
  if (a.is_same(b)) return Overlap::full;
  if (a.numel() == 0 || b.numel() == 0) return Overlap::no;
  if (!is_non_overlapping_and_dense(a) || !is_non_overlapping_and_dense(b)) return Overlap::too_hard;
  if (!a.shares_storage(b)) return Overlap::no;
  // Dense: each covers exactly [data, data + nbytes).
  const char* a0 = static_cast<const char*>(a.data_ptr());
  const char* b0 = static_cast<const char*>(b.data_ptr());
  const char* a1 = a0 + a.nbytes();
  const char* b1 = b0 + b.nbytes();
  if (a0 == b0 && a1 == b1) return a.strides() == b.strides() ? Overlap::full : Overlap::partial;
  return a0 < b1 && b0 < a1 ? Overlap::partial : Overlap::no;
}

bool may_overlap(const Tensor& a, const Tensor& b) {
  if (!a.shares_storage(b) || a.numel() == 0 || b.numel() == 0) return false;
  auto [a0, a1] = byte_extent(a);
  auto [b0, b1] = byte_extent(b);
  return a0 < b1 && b0 < a1;
}

void assert_no_internal_overlap(std::string_view op, const Tensor& t) {
  SF_CHECK(internal_overlap(t) != InternalOverlap::yes,
           "{}: unsupported operation: more than one element of the written-to tensor refers to "
           "a single memory location. Please clone() the tensor before performing the "
           "operation. (written-to {} with strides {})",
           op, t.type_string(), shape_to_string(t.strides()));
}

void assert_no_partial_overlap(std::string_view op, const Tensor& written, const Tensor& input) {
  SF_CHECK(overlap_status(written, input) != Overlap::partial,
           "{}: unsupported operation: some elements of the input tensor and the written-to "
           "tensor refer to a single memory location. Please clone() the tensor before "
           "performing the operation. (input {} at offset {} with strides {}, written-to {} at "
           "offset {} with strides {})",
           op, input.type_string(), input.storage_offset(), shape_to_string(input.strides()),
           written.type_string(), written.storage_offset(), shape_to_string(written.strides()));
}

}  // namespace symmflow
