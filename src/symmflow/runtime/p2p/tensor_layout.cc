// TensorLayout (tensor_layout.h): dimension coalescing and the strided element
// copy between a tensor and a contiguous buffer.
#include "symmflow/runtime/p2p/tensor_layout.h"

#include <algorithm>
#include <cstring>

namespace symmflow::dist {

namespace {

// n elements of N bytes, `stride_bytes` apart in the tensor, packed in buffer.
template <size_t N>
void copy_strided_run(char* element, int64_t stride_bytes, char* buffer, size_t n, CopyDirection dir) {
  if (dir == CopyDirection::tensor_to_buffer)
    for (size_t i = 0; i < n; ++i, element += stride_bytes, buffer += N) std::memcpy(buffer, element, N);
  else
    for (size_t i = 0; i < n; ++i, element += stride_bytes, buffer += N) std::memcpy(element, buffer, N);
}

void copy_bytes(char* tensor_bytes, char* buffer, size_t n, CopyDirection dir) {
  if (dir == CopyDirection::tensor_to_buffer) std::memcpy(buffer, tensor_bytes, n);
  else std::memcpy(tensor_bytes, buffer, n);
}

}  // namespace

TensorLayout layout_of(const Tensor& t) {
  TensorLayout l;
  l.itemsize = t.itemsize();
  if (t.numel() == 0) {
    l.sizes = {0};
    l.strides = {1};
    return l;
  }
  l.data = static_cast<char*>(t.data_ptr());
  for (int64_t d = 0; d < t.dim(); ++d) {
    int64_t size = t.sizes()[size_t(d)], stride = t.strides()[size_t(d)];
    if (size == 1) continue;
    if (!l.sizes.empty() && l.strides.back() == stride * size) {  // merge with the outer dim
      l.sizes.back() *= size;
      l.strides.back() = stride;
    } else {
      l.sizes.push_back(size);
      l.strides.push_back(stride);
    }
  }
  if (l.sizes.empty()) {
    l.sizes = {1};
    l.strides = {1};
  }
  return l;
}

void copy_elements(const TensorLayout& layout, size_t first, size_t count, char* buffer,
                   CopyDirection direction) {
  if (count == 0) return;
  const size_t itemsize = layout.itemsize;
  if (layout.contiguous()) {
    copy_bytes(layout.data + first * itemsize, buffer, count * itemsize, direction);
    return;
  }
  const size_t ndims = layout.sizes.size(), inner = ndims - 1;
  std::vector<int64_t> index(ndims, 0);  // multi-index of element `first`
  size_t rest = first;
  for (size_t d = ndims; d-- > 0;) {
    index[d] = int64_t(rest % size_t(layout.sizes[d]));
    rest /= size_t(layout.sizes[d]);
  }
  const int64_t inner_stride_bytes = layout.strides[inner] * int64_t(itemsize);
  while (count > 0) {
    int64_t offset = 0;
    for (size_t d = 0; d < ndims; ++d) offset += index[d] * layout.strides[d];
    char* run = layout.data + offset * int64_t(itemsize);
    // The rest of the innermost row, at most `count` elements.
    size_t n = std::min(count, size_t(layout.sizes[inner] - index[inner]));
    if (layout.strides[inner] == 1) {
      copy_bytes(run, buffer, n * itemsize, direction);
    } else {
      switch (itemsize) {
        case 1: copy_strided_run<1>(run, inner_stride_bytes, buffer, n, direction); break;
        case 2: copy_strided_run<2>(run, inner_stride_bytes, buffer, n, direction); break;
        case 4: copy_strided_run<4>(run, inner_stride_bytes, buffer, n, direction); break;
        case 8: copy_strided_run<8>(run, inner_stride_bytes, buffer, n, direction); break;
        default:
          for (size_t i = 0; i < n; ++i)
            copy_bytes(run + int64_t(i) * inner_stride_bytes, buffer + i * itemsize, itemsize, direction);
      }
    }
    buffer += n * itemsize;
    count -= n;
    index[inner] += int64_t(n);
    for (size_t d = inner; d > 0 && index[d] == layout.sizes[d]; --d) {  // carry
      index[d] = 0;
      ++index[d - 1];
    }
  }
}

}  // namespace symmflow::dist
