// Bitwise comparison of two tensors: how `--check`, the golden tests and the
// differential tests tell eager from compiled; and an element as text (the
// messages, `symmflow run`'s summary).
#pragma once
#include <string>

#include "symmflow/core/tensor.h"

namespace symmflow::exec {

// Element i (row-major) of a contiguous tensor as text, in its own dtype's
// shortest form: "1.5", "-3", "true".
std::string element_text(const Tensor& contiguous, int64_t i);

// The first element where a and b differ bitwise, as text; "" when equal.
// NaNs compare by their bits, and -0.0 differs from 0.0.
std::string first_bitwise_difference(const Tensor& a, const Tensor& b);

}  // namespace symmflow::exec
