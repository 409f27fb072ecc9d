#include "symmflow/core/shape.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "symmflow/core/error.h"

namespace symmflow {

int64_t numel_of(std::span<const int64_t> sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

Shape contiguous_strides(std::span<const int64_t> sizes) {
  Shape st(sizes.size());
  int64_t acc = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    st[i] = acc;
    acc *= std::max<int64_t>(sizes[i], 1);
  }
  return st;
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
