// CompactLayout: the element order of a strided view in 20 bytes, small enough
// to ride in a P2P control event (runtime/p2p/channel.h), so that a peer can
// write into (or read from) a strided symmetric buffer directly: a column halo
// then moves once, rank to rank, instead of through the staged mailbox (pack
// into it, unpack out of it: 2 counted copies per message).
//
//   f32[8, 1] strides [6, 1] (a column of an 8 x 6 grid)  -> sizes {8},    strides {6}
//   f32[4, 2] strides [10, 1] (two columns)              -> sizes {4, 2}, strides {10, 1}
//   f32[4, 6] strides [30, 1] (x[:, 0, :] of [4, 5, 6])   -> sizes {4, 6}, strides {30, 1}
//   f32[1, 6] (a row), f32[8, 6] dense                   -> dims() == 0: one run
//
// The layout is coalesced as core/strided.h coalesces (size-1 dims dropped,
// contiguous neighbours merged). A view fits when it keeps at most kMaxDims
// dims with sizes and element strides in 32 bits: every halo of a 2-D or 3-D
// grid does, bands of several columns or planes included (x[:, :, 0:2] of a
// 3-D grid coalesces to [D * H, 2]). The element size rides along: the two
// ends of a message may view its bytes as different dtypes. The compiler asks
// the same function (ir::p2p_addressable), so the plan's `direct` and the run
// agree.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "symmflow/core/strided.h"

namespace symmflow {

// An aggregate without member initializers: it sits in the union of a
// trivially constructible event. CompactLayout{} is one run.
struct CompactLayout {
  static constexpr int kMaxDims = 2;
  int32_t sizes[kMaxDims];    // outer to inner; a dim of size 0 is absent (trailing)
  int32_t strides[kMaxDims];  // in elements
  uint32_t itemsize;          // bytes per element (0 in CompactLayout{}: set by the sender of the layout)
  int dims() const;           // 0: one run of adjacent elements (any length)
};

// The compact form of a view's sizes and element strides (empty strides:
// contiguous) with elements of `itemsize` bytes, or nullopt when it does not fit.
std::optional<CompactLayout> compact_layout(std::span<const int64_t> sizes, std::span<const int64_t> strides,
                                            size_t itemsize);

// The same of a layout already coalesced (its strides in bytes): P2P has one
// for every strided buffer, so the view is not coalesced twice.
std::optional<CompactLayout> compact_layout(const StridedLayout& l);

// `c` over `nbytes` bytes (elements of c.itemsize) with element 0 at `data`:
// the layout pack/unpack/copy_elements walk.
StridedLayout strided_layout(const CompactLayout& c, char* data, size_t nbytes);

}  // namespace symmflow
