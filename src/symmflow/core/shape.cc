#include "symmflow/core/shape.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "symmflow/core/checked.h"
#include "symmflow/core/error.h"

namespace symmflow {

int64_t numel_of(std::span<const int64_t> sizes) {
  int64_t n = 1;
  for (int64_t s : sizes)
    n = checked_mul(n, s, [&] { return "the element count of shape " + shape_to_string(sizes); });
  return n;
}

int64_t nbytes_of(std::span<const int64_t> sizes, size_t itemsize) {
  // int64 is the cap: every byte count (size_t on 64-bit hosts) then fits too.
  static_assert(sizeof(size_t) >= sizeof(int64_t));
  return checked_mul(numel_of(sizes), int64_t(itemsize), [&] {
    return fmt::format("the bytes of shape {} with {}-byte elements", shape_to_string(sizes), itemsize);
  });
}

Shape contiguous_strides(std::span<const int64_t> sizes) {
  Shape st(sizes.size());
  int64_t acc = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    st[i] = acc;
    if (i == 0) break;  // the outermost size scales nothing
    acc = checked_mul(acc, std::max<int64_t>(sizes[i], 1),
                      [&] { return "the contiguous strides of shape " + shape_to_string(sizes); });
  }
  return st;
}

bool has_contiguous_strides(std::span<const int64_t> sizes, std::span<const int64_t> strides) {
  if (strides.size() != sizes.size()) return false;
  int64_t acc = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    if (strides[i] != acc) return false;
    if (i == 0) break;  // as contiguous_strides: the outermost size scales nothing
    // Past int64, contiguous_strides is an Error: no stride equals such a product.
    if (__builtin_mul_overflow(acc, std::max<int64_t>(sizes[i], 1), &acc)) return false;
  }
  return true;
}

int64_t storage_extent(std::span<const int64_t> sizes, std::span<const int64_t> strides, int64_t offset) {
  if (numel_of(sizes) == 0) return 0;
  auto what = [&] {
    return fmt::format("the storage extent of view {} with strides {} at offset {}", shape_to_string(sizes),
                       shape_to_string(strides), offset);
  };
  int64_t end = checked_add(offset, 1, what);
  for (size_t d = 0; d < sizes.size(); ++d) end = checked_add(end, checked_mul(sizes[d] - 1, strides[d], what), what);
  return end;
}

int64_t wrap_dim(int64_t dim, int64_t ndim) {
  int64_t n = std::max<int64_t>(ndim, 1);  // a 0-d tensor accepts dim 0 and -1
  SF_CHECK(dim >= -n && dim < n, "dimension out of range: expected in [{}, {}], got {}", -n,
           n - 1, dim);
  return dim < 0 ? dim + n : dim;
}

Shape broadcast_shapes(std::span<const int64_t> a, std::span<const int64_t> b) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    SF_CHECK(da == db || da == 1 || db == 1,
             "shapes {} and {} cannot be broadcast: dimension {} is {} vs {}",
             shape_to_string(a), shape_to_string(b), i, da, db);
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::string shape_to_string(std::span<const int64_t> sizes) {
  return fmt::format("[{}]", fmt::join(sizes, ", "));
}

}  // namespace symmflow
