#include "symmflow/core/strided.h"

namespace symmflow {

namespace {

// A fixed element size lets the compiler turn each memcpy into one load and store.
template <size_t Item>
void gather_fixed(const char* element, int64_t stride_bytes, char* buffer, int64_t n) {
  for (int64_t i = 0; i < n; ++i, element += stride_bytes, buffer += Item) std::memcpy(buffer, element, Item);
}

template <size_t Item>
void scatter_fixed(const char* buffer, char* element, int64_t stride_bytes, int64_t n) {
  for (int64_t i = 0; i < n; ++i, element += stride_bytes, buffer += Item) std::memcpy(element, buffer, Item);
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
  switch (itemsize) {
    case 1: return gather_fixed<1>(element, stride_bytes, buffer, n);
    case 2: return gather_fixed<2>(element, stride_bytes, buffer, n);
    case 4: return gather_fixed<4>(element, stride_bytes, buffer, n);
    case 8: return gather_fixed<8>(element, stride_bytes, buffer, n);
  }
  for (int64_t i = 0; i < n; ++i, element += stride_bytes, buffer += itemsize) std::memcpy(buffer, element, itemsize);
}

void scatter_elements(const char* buffer, char* element, int64_t stride_bytes, int64_t n, size_t itemsize) {
  switch (itemsize) {
    case 1: return scatter_fixed<1>(buffer, element, stride_bytes, n);
    case 2: return scatter_fixed<2>(buffer, element, stride_bytes, n);
    case 4: return scatter_fixed<4>(buffer, element, stride_bytes, n);
    case 8: return scatter_fixed<8>(buffer, element, stride_bytes, n);
  }
  for (int64_t i = 0; i < n; ++i, element += stride_bytes, buffer += itemsize) std::memcpy(element, buffer, itemsize);
}

}  // namespace symmflow
