#include "symmflow/core/overlap.h"

#include <algorithm>
#include <numeric>
#include <utility>
#include <vector>

#include "symmflow/core/strided.h"

namespace symmflow {

bool is_one_run(std::span<const int64_t> sizes, std::span<const int64_t> strides) {
  int64_t expected = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] == 1) continue;
    if (strides[i] != expected) return false;
    expected *= sizes[i];
  }
  return true;
}

bool rows_in_place(std::span<const int64_t> sizes, std::span<const int64_t> strides) {
  if (sizes.size() == 2 && (sizes[1] <= 1 || strides[1] == 1)) return sizes[0] <= 1 || strides[0] >= sizes[1];
  return is_one_run(sizes, strides);
}

namespace {

// PyTorch's compute_non_overlapping_and_dense on geometry: sort the dims by
// stride, size-1 dims last; each stride must be the product of the sizes before.
bool dense(std::span<const int64_t> sizes, std::span<const int64_t> strides) {
  if (sizes.size() == 1) return sizes[0] < 2 || strides[0] == 1;
  std::vector<size_t> perm(sizes.size());
  std::iota(perm.begin(), perm.end(), size_t(0));
  std::stable_sort(perm.begin(), perm.end(), [&](size_t a, size_t b) {
    if (sizes[a] < 2) return false;
    if (sizes[b] < 2) return true;
    return strides[a] < strides[b];
  });
  int64_t require = 1;
  for (size_t d : perm) {
    if (sizes[d] < 2) return true;
    if (strides[d] != require) return false;
    require *= sizes[d];
  }
  return true;
}

// v's bytes that fall in [lo, hi), as sorted disjoint runs.
ByteRuns byte_runs(const ViewGeometry& v, int64_t lo, int64_t hi) {
  std::vector<int64_t> byte_strides(v.strides.begin(), v.strides.end());
  for (int64_t& s : byte_strides) s *= v.itemsize;
  const StridedLoop<1> loop = coalesce<1>(v.sizes, std::array<std::vector<int64_t>, 1>{byte_strides});
  ByteRuns runs;
  const int64_t base = v.offset * v.itemsize, isz = v.itemsize;
  auto add = [&](int64_t b, int64_t e) {
    if (b < hi && lo < e) runs.emplace_back(b, e);
  };
  for_each_run_range(loop, 0, loop.numel, [&](const std::array<int64_t, 1>& off, const int64_t* s, int64_t n) {
    const int64_t first = base + off[0];
    if (s[0] == isz || s[0] == -isz || n == 1) {  // adjacent elements: one run
      const int64_t last = first + (n - 1) * s[0];
      add(std::min(first, last), std::max(first, last) + isz);
    } else {
      for (int64_t i = 0; i < n; ++i) add(first + i * s[0], first + i * s[0] + isz);
    }
  });
  return merge_runs({}, runs);
}

// Runs the walk of v would produce: one per element unless the innermost
// coalesced dim is adjacent elements (a cheap upper bound, before walking).
int64_t runs_to_walk(const ViewGeometry& v) {
  std::vector<int64_t> byte_strides(v.strides.begin(), v.strides.end());
  for (int64_t& s : byte_strides) s *= v.itemsize;
  const StridedLoop<1> loop = coalesce<1>(v.sizes, std::array<std::vector<int64_t>, 1>{byte_strides});
  const int64_t inner = loop.strides[0].back();
  return inner == v.itemsize || inner == -v.itemsize ? loop.numel / loop.sizes.back() : loop.numel;
}

}  // namespace

std::optional<ByteRuns> view_byte_runs(const ViewGeometry& v) {
  if (numel_of(v.sizes) == 0) return ByteRuns{};
  if (runs_to_walk(v) > kMaxWalkedRuns) return std::nullopt;
  const auto [lo, hi] = byte_extent(v);
  return byte_runs(v, lo, hi);
}

bool runs_cover(const ByteRuns& cover, const ByteRuns& runs) {
  // Both sorted: each run must lie inside one cover run (cover runs are merged,
  // so a run spanning two of them has a gap).
  size_t i = 0;
  for (const auto& [b, e] : runs) {
    while (i < cover.size() && cover[i].second <= b) ++i;
    if (i == cover.size() || cover[i].first > b || cover[i].second < e) return false;
  }
  return true;
}

ByteRuns merge_runs(const ByteRuns& cover, const ByteRuns& runs) {
  ByteRuns all(cover);
  all.insert(all.end(), runs.begin(), runs.end());
  std::sort(all.begin(), all.end());
  ByteRuns merged;
  for (const auto& r : all) {
    if (!merged.empty() && r.first <= merged.back().second) merged.back().second = std::max(merged.back().second, r.second);
    else merged.push_back(r);
  }
  return merged;
}

ViewGeometry geometry(const Tensor& t) {
  return {t.sizes(), t.strides(), t.storage_offset(), int64_t(t.itemsize())};
}

std::pair<int64_t, int64_t> byte_extent(const ViewGeometry& v) {
  int64_t lo = v.offset * v.itemsize, hi = lo;
  for (size_t d = 0; d < v.sizes.size(); ++d) {
    const int64_t span = (v.sizes[d] - 1) * v.strides[d] * v.itemsize;
    (span < 0 ? lo : hi) += span;
  }
  return {lo, hi + v.itemsize};
}

bool views_share_bytes(const ViewGeometry& a, const ViewGeometry& b) {
  if (numel_of(a.sizes) == 0 || numel_of(b.sizes) == 0) return false;
  const auto [a0, a1] = byte_extent(a);
  const auto [b0, b1] = byte_extent(b);
  if (!(a0 < b1 && b0 < a1)) return false;
  // A dense view covers its whole span (same element size: mixed ones are walked).
  if (a.itemsize == b.itemsize && dense(a.sizes, a.strides) && dense(b.sizes, b.strides)) return true;
  if (runs_to_walk(a) > kMaxWalkedRuns || runs_to_walk(b) > kMaxWalkedRuns) return true;
  const ByteRuns ra = byte_runs(a, b0, b1), rb = byte_runs(b, a0, a1);
  for (size_t i = 0, j = 0; i < ra.size() && j < rb.size();) {
    if (ra[i].first < rb[j].second && rb[j].first < ra[i].second) return true;
    (ra[i].second <= rb[j].second ? i : j) += 1;
  }
  return false;
}

bool is_non_overlapping_and_dense(const Tensor& t) {
  if (t.numel() == 0 || t.is_contiguous()) return true;
  return dense(t.sizes(), t.strides());
}

bool is_non_overlapping_and_dense(const ViewGeometry& v) {
  return numel_of(v.sizes) == 0 || dense(v.sizes, v.strides);
}

InternalOverlap internal_overlap(const ViewGeometry& v) {
  if (std::find(v.sizes.begin(), v.sizes.end(), 0) != v.sizes.end() || dense(v.sizes, v.strides))
    return InternalOverlap::no;
  for (size_t d = 0; d < v.sizes.size(); ++d)
    if (v.strides[d] == 0 && v.sizes[d] > 1) return InternalOverlap::yes;
  return InternalOverlap::too_hard;
}

InternalOverlap internal_overlap(const Tensor& t) {
  if (t.numel() == 0 || t.is_contiguous()) return InternalOverlap::no;
  return internal_overlap(geometry(t));
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
  auto [a0, a1] = byte_extent(geometry(a));
  auto [b0, b1] = byte_extent(geometry(b));
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
