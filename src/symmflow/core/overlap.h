// Memory overlap of tensor views, with PyTorch's rules (ATen/MemoryOverlap.h): what
// an in-place or out= write may share with its inputs.
//
//   internal_overlap(expand(x, {2, 3}))  == InternalOverlap::yes   // stride 0, size 2
//   overlap_status(x[0:6], x[2:8])       == Overlap::partial       // both dense, shifted
//   overlap_status(x[0:6], x[0:6])       == Overlap::full          // the same geometry
//   may_overlap(a, b)                    // conservative: do their byte ranges meet?
//   views_share_bytes(geometry(a), geometry(b))   // exact, on geometry alone (no storage)
//
// Every test looks at geometry only (O(ndim log ndim), never per element). Meta
// tensors have no storage, so they overlap nothing (internal overlap excepted: it
// is geometry alone).
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "symmflow/core/tensor.h"

namespace symmflow {

// PyTorch's is_non_overlapping_and_dense: some permutation of the dims is
// contiguous (dims of size 1 ignored), so the view covers exactly numel elements
// without gaps or repeats.
bool is_non_overlapping_and_dense(const Tensor& t);

enum class InternalOverlap { no, yes, too_hard };
// yes: a dim of size > 1 has stride 0 (several elements at one address); no:
// non-overlapping and dense; too_hard: anything else (not decided, as PyTorch).
InternalOverlap internal_overlap(const Tensor& t);

enum class Overlap { no, full, partial, too_hard };
// PyTorch's get_overlap_status: full for the same tensor, or two dense views of one
// storage with the same first and last byte and the same strides; partial when two
// dense views of one storage share bytes otherwise; too_hard when either is not
// dense (not decided); no otherwise (or when either is empty).
Overlap overlap_status(const Tensor& a, const Tensor& b);

// True when two non-empty views of one storage have intersecting byte ranges
// [lowest element, highest element]: they *may* share an element.
bool may_overlap(const Tensor& a, const Tensor& b);

// Where a view lies in its storage, as a Tensor and the IR's TensorType both say
// it: sizes and strides in elements (as many strides as sizes), the storage
// offset in elements, the element size in bytes. Lets a compiler pass ask the
// questions above of types alone (passes/race_check).
struct ViewGeometry {
  std::span<const int64_t> sizes, strides;
  int64_t offset = 0;
  int64_t itemsize = 1;
};
ViewGeometry geometry(const Tensor& t);  // t's (valid while t's sizes and strides are)

// is_non_overlapping_and_dense above, of a view's geometry alone (an empty view is dense).
bool is_non_overlapping_and_dense(const ViewGeometry& v);

// PyTorch's is_contiguous, of sizes and strides alone: the elements in
// row-major order are one run of memory, dims of size 1 ignored (a row of a
// matrix, a column of a one-column matrix). Tensor::is_contiguous and
// core/compact_layout.h (what a P2P peer can address) ask it.
bool is_one_run(std::span<const int64_t> sizes, std::span<const int64_t> strides);

// Whether a tile is rows that can be read and written in place one by one: a
// 2-D view with unit inner stride (or one column) whose rows do not overlap,
// or any one-run view. The runtime's tile_reduce reads such tiles in place
// (anything else it packs, counted), and collective_lowering labels it
// direct on them: one rule for both.
bool rows_in_place(std::span<const int64_t> sizes, std::span<const int64_t> strides);

// [begin, end) bytes from the storage's start that a non-empty view spans
// (lowest element to highest element, negative strides included).
std::pair<int64_t, int64_t> byte_extent(const ViewGeometry& v);

// internal_overlap above, of a view's geometry alone (a compiler pass asks it
// of a type: ir::ViewExtent(type).view()).
InternalOverlap internal_overlap(const ViewGeometry& v);

// Exact: do two views of one storage share a byte? Disjoint spans say no and two
// dense views with meeting spans say yes at once; otherwise both views' elements
// are walked as coalesced byte runs (in the other's span only) and compared, so
// that interleaved views (the even and the odd columns) are told apart. Beyond
// kMaxWalkedRuns runs per view the answer is a conservative yes.
inline constexpr int64_t kMaxWalkedRuns = int64_t(1) << 22;
bool views_share_bytes(const ViewGeometry& a, const ViewGeometry& b);

// Bytes of a storage as sorted, disjoint [begin, end) runs from its start.
using ByteRuns = std::vector<std::pair<int64_t, int64_t>>;
// A view's bytes (coalesced: a dense view is one run, a column of a row-major
// matrix one run per element); nullopt beyond kMaxWalkedRuns runs (not walked).
std::optional<ByteRuns> view_byte_runs(const ViewGeometry& v);
// Does `cover` hold every byte of `runs`?
bool runs_cover(const ByteRuns& cover, const ByteRuns& runs);
// cover and runs together, sorted and merged.
ByteRuns merge_runs(const ByteRuns& cover, const ByteRuns& runs);

// PyTorch's checks, with its messages prefixed by `op`:
//   "<op>: unsupported operation: more than one element of the written-to tensor
//    refers to a single memory location. Please clone() the tensor before
//    performing the operation."
void assert_no_internal_overlap(std::string_view op, const Tensor& t);
//   "<op>: unsupported operation: some elements of the input tensor and the
//    written-to tensor refer to a single memory location. Please clone() the tensor
//    before performing the operation."
void assert_no_partial_overlap(std::string_view op, const Tensor& written, const Tensor& input);

}  // namespace symmflow
