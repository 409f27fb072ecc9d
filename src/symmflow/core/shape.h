// Shapes and strides: sizes and strides are in elements, row-major by default.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace symmflow {

using Shape = std::vector<int64_t>;

int64_t numel_of(std::span<const int64_t> sizes);
Shape contiguous_strides(std::span<const int64_t> sizes);
// Wraps a possibly negative dim into [0, ndim); an out-of-range dim is an Error.
int64_t wrap_dim(int64_t dim, int64_t ndim);
// NumPy broadcasting of two shapes; an Error names both shapes when they clash.
Shape broadcast_shapes(std::span<const int64_t> a, std::span<const int64_t> b);
std::string shape_to_string(std::span<const int64_t> sizes);  // "[4, 1024]"

}  // namespace symmflow
