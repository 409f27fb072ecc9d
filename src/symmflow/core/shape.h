// Shapes and strides: sizes and strides are in elements, row-major by default.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace symmflow {

using Shape = std::vector<int64_t>;

// The element count; a product past int64 is an Error naming the shape (checked.h).
int64_t numel_of(std::span<const int64_t> sizes);
// numel * itemsize, the bytes a contiguous tensor of this shape holds. Past int64
// (and so past size_t) it is an Error: the cap on any tensor, meta included.
int64_t nbytes_of(std::span<const int64_t> sizes, size_t itemsize);
Shape contiguous_strides(std::span<const int64_t> sizes);
// strides == contiguous_strides(sizes), without building them.
bool has_contiguous_strides(std::span<const int64_t> sizes, std::span<const int64_t> strides);
// The elements a view needs in its storage: offset + 1 + sum((size - 1) * stride),
// 0 for an empty view. Strides are non-negative. Overflow is an Error.
int64_t storage_extent(std::span<const int64_t> sizes, std::span<const int64_t> strides, int64_t offset);
// Wraps a possibly negative dim into [0, ndim); an out-of-range dim is an Error.
int64_t wrap_dim(int64_t dim, int64_t ndim);
// NumPy broadcasting of two shapes; an Error names both shapes when they clash.
Shape broadcast_shapes(std::span<const int64_t> a, std::span<const int64_t> b);
std::string shape_to_string(std::span<const int64_t> sizes);  // "[4, 1024]"

}  // namespace symmflow
