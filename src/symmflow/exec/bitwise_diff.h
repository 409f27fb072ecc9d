// Bitwise comparison of two tensors: how `--check`, the golden tests and the
// differential tests tell eager from compiled.
#pragma once
#include <string>

#include "symmflow/core/tensor.h"

namespace symmflow::exec {

// The first element where a and b differ bitwise, as text; "" when equal.
// NaNs compare by their bits, and -0.0 differs from 0.0.
std::string first_bitwise_difference(const Tensor& a, const Tensor& b);

}  // namespace symmflow::exec
