#include "symmflow/core/compact_layout.h"

#include <array>
#include <limits>
#include <vector>

#include "symmflow/core/error.h"
#include "symmflow/core/overlap.h"

namespace symmflow {

int CompactLayout::dims() const {
  int d = 0;
  while (d < kMaxDims && sizes[d] != 0) ++d;
  return d;
}

namespace {

CompactLayout one_run(size_t itemsize) {
  CompactLayout c{};
  c.itemsize = uint32_t(itemsize);
  return c;
}

// A coalesced loop with strides in units of `unit` bytes (1: elements of the
// view; itemsize: a StridedLayout's byte strides), if it fits.
std::optional<CompactLayout> fit(const StridedLoop<1>& loop, int64_t unit, size_t itemsize) {
  CompactLayout c = one_run(itemsize);
  if (loop.sizes.size() > size_t(CompactLayout::kMaxDims)) return std::nullopt;
  constexpr int64_t lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max();
  for (size_t d = 0; d < loop.sizes.size(); ++d) {
    const int64_t size = loop.sizes[d], stride = loop.strides[0][d] / unit;
    if (size > hi || stride < lo || stride > hi) return std::nullopt;
    c.sizes[d] = int32_t(size);
    c.strides[d] = int32_t(stride);
  }
  return c;
}

}  // namespace

std::optional<CompactLayout> compact_layout(std::span<const int64_t> sizes, std::span<const int64_t> strides,
                                            size_t itemsize) {
  if (strides.empty() || is_one_run(sizes, strides)) return one_run(itemsize);
  return fit(coalesce<1>(sizes, std::array<std::span<const int64_t>, 1>{strides}), 1, itemsize);
}

std::optional<CompactLayout> compact_layout(const StridedLayout& l) {
  if (l.contiguous()) return one_run(l.itemsize);
  return fit(l.loop, int64_t(l.itemsize), l.itemsize);
}

StridedLayout strided_layout(const CompactLayout& c, char* data, size_t nbytes) {
  const size_t itemsize = c.itemsize;
  const int64_t numel = int64_t(nbytes / itemsize);
  StridedLayout l;
  l.itemsize = itemsize;
  l.data = numel > 0 ? data : nullptr;
  const int dims = c.dims();
  if (dims == 0) {
    l.loop.sizes = {numel};
    l.loop.strides[0] = {int64_t(itemsize)};
  } else {
    for (int d = 0; d < dims; ++d) {
      l.loop.sizes.push_back(c.sizes[d]);
      l.loop.strides[0].push_back(int64_t(c.strides[d]) * int64_t(itemsize));
    }
  }
  l.loop.numel = numel;
  int64_t product = 1;
  for (int64_t n : l.loop.sizes) product *= n;
  SF_CHECK(product == numel && int64_t(itemsize) * numel == int64_t(nbytes),
           "compact layout of {} dims over {} elements of {} bytes does not cover {} bytes", dims, product, itemsize,
           nbytes);
  return l;
}

}  // namespace symmflow
