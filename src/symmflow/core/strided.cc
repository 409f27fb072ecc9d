#include "symmflow/core/strided.h"

namespace symmflow {

namespace {

// A fixed Item size turns each memcpy into one load and store.
template <size_t Item>
void copy_fixed(char* dst, int64_t dst_stride, const char* src, int64_t src_stride, int64_t n, size_t item) {
  const size_t size = Item ? Item : item;
  for (int64_t i = 0; i < n; ++i, dst += dst_stride, src += src_stride) std::memcpy(dst, src, size);
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

void copy_strided_elements(char* dst, int64_t dst_stride, const char* src, int64_t src_stride, int64_t n,
                           size_t itemsize) {
  switch (itemsize) {
    case 1: return copy_fixed<1>(dst, dst_stride, src, src_stride, n, 1);
    case 2: return copy_fixed<2>(dst, dst_stride, src, src_stride, n, 2);
    case 4: return copy_fixed<4>(dst, dst_stride, src, src_stride, n, 4);
    case 8: return copy_fixed<8>(dst, dst_stride, src, src_stride, n, 8);
    default: return copy_fixed<0>(dst, dst_stride, src, src_stride, n, itemsize);
  }
}

void gather_elements(const char* element, int64_t stride_bytes, char* buffer, int64_t n, size_t itemsize) {
  copy_strided_elements(buffer, int64_t(itemsize), element, stride_bytes, n, itemsize);
}

void scatter_elements(const char* buffer, char* element, int64_t stride_bytes, int64_t n, size_t itemsize) {
  copy_strided_elements(element, stride_bytes, buffer, int64_t(itemsize), n, itemsize);
}

}  // namespace symmflow
