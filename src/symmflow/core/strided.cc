#include "symmflow/core/strided.h"

namespace symmflow {

namespace {

// n elements `stride_bytes` apart from `element`, to (Gather) or from the
// contiguous `buffer`. A fixed Item size turns each memcpy into one load and store.
template <bool Gather, size_t Item>
void move_fixed(char* element, int64_t stride_bytes, char* buffer, int64_t n, size_t item) {
  const size_t size = Item ? Item : item;
  for (int64_t i = 0; i < n; ++i, element += stride_bytes, buffer += size) {
    if constexpr (Gather) std::memcpy(buffer, element, size);
    else std::memcpy(element, buffer, size);
  }
}

template <bool Gather>
void move_elements(char* element, int64_t stride_bytes, char* buffer, int64_t n, size_t itemsize) {
  switch (itemsize) {
    case 1: return move_fixed<Gather, 1>(element, stride_bytes, buffer, n, 1);
    case 2: return move_fixed<Gather, 2>(element, stride_bytes, buffer, n, 2);
    case 4: return move_fixed<Gather, 4>(element, stride_bytes, buffer, n, 4);
    case 8: return move_fixed<Gather, 8>(element, stride_bytes, buffer, n, 8);
    default: return move_fixed<Gather, 0>(element, stride_bytes, buffer, n, itemsize);
  }
}

}  // namespace

std::vector<int64_t> byte_strides(const Tensor& t) {
  std::vector<int64_t> out(t.strides().begin(), t.strides().end());
  for (auto& s : out) s *= int64_t(t.itemsize());
  return out;
}

StridedLayout strided_layout(const Tensor& t) {
  StridedLayout l;
  l.itemsize = t.itemsize();
  l.loop = coalesce<1>(t.sizes(), std::array<std::vector<int64_t>, 1>{byte_strides(t)});
  if (l.loop.numel > 0) l.data = static_cast<char*>(t.data_ptr());
  return l;
}

void gather_elements(const char* element, int64_t stride_bytes, char* buffer, int64_t n, size_t itemsize) {
  move_elements<true>(const_cast<char*>(element), stride_bytes, buffer, n, itemsize);
}

void scatter_elements(const char* buffer, char* element, int64_t stride_bytes, int64_t n, size_t itemsize) {
  move_elements<false>(element, stride_bytes, const_cast<char*>(buffer), n, itemsize);
}

}  // namespace symmflow
