// TensorLayout: a tensor's elements in row-major order as (coalesced) strided
// loops, and copy_elements(), which moves a range of those elements between the
// tensor and a contiguous byte buffer. Every P2P path that is not a plain
// memcpy (strided views into a peer's buffer, the mailbox, eager slots, the
// packed copy for the network) goes through it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "symmflow/core/tensor.h"

namespace symmflow::dist {

struct TensorLayout {
  char* data = nullptr;                 // the first element
  size_t itemsize = 1;                  // bytes per element
  std::vector<int64_t> sizes, strides;  // in elements; innermost last; never empty
  bool contiguous() const { return sizes.size() == 1 && strides[0] == 1; }
};

TensorLayout layout_of(const Tensor& t);

enum class CopyDirection { tensor_to_buffer, buffer_to_tensor };

// Copies elements [first, first + count) of the tensor (row-major order) to
// `buffer` (tensor_to_buffer) or from it into the tensor (buffer_to_tensor).
// `buffer` is contiguous.
void copy_elements(const TensorLayout& layout, size_t first, size_t count, char* buffer,
                   CopyDirection direction);

// The whole tensor of `nbytes` bytes.
inline void copy_all(const TensorLayout& layout, size_t nbytes, char* buffer, CopyDirection direction) {
  copy_elements(layout, 0, nbytes / layout.itemsize, buffer, direction);
}

}  // namespace symmflow::dist
