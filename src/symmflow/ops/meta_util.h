// Small helpers for Meta kernels of the communication ops: they compute result
// types only, exactly as the CPU kernels will shape their results.
#pragma once
#include <span>
#include <vector>

#include "symmflow/core/ivalue.h"

namespace symmflow::ops {

// A fresh contiguous tensor of t's type: a meta tensor when t is meta, else an
// allocation from the current allocator (so it follows symm::Scope).
Tensor empty_like(const Tensor& t);
Tensor empty_with_type(const Tensor& like, Shape sizes);
// [group_size * d0, d1, ...]: the all_gather result shape.
Shape gathered_shape(const Tensor& t, int64_t group_size, const char* op);
// [d0 / group_size, d1, ...]; d0 must divide evenly.
Shape scattered_shape(const Tensor& t, int64_t group_size, const char* op);
// Checks that `out` has type (dtype, shape) for op `op`'s argument `arg`.
void check_out(const Tensor& out, DType dtype, const Shape& shape, const char* op, const char* arg);
// Names of the reduce ops every collective accepts.
void check_reduce_op(const std::string& op, const char* where);

}  // namespace symmflow::ops
