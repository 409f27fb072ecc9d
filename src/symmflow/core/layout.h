// The layout of a fresh elementwise result: PyTorch 1.13's TensorIterator rule
// (aten/src/ATen/TensorIterator.cpp: compute_fast_setup_type, reorder_dimensions,
// allocate_or_resize_outputs), so that exp(x.t()) has strides (1, n) as in PyTorch
// and its loop is one dense run over both, and a user's .stride(), .is_contiguous()
// or .view() of a result sees what PyTorch gives.
//
//   elementwise_strides({4, 3}, {geometry(x.t())})            == {1, 4}
//   elementwise_strides({4, 3}, {geometry(x.t()), geometry(y)}) == {1, 4}   // the first decides
//   elementwise_strides({4, 3}, {geometry(y), geometry(x.t())}) == {3, 1}
//   elementwise_strides({4, 3}, {geometry(x[:, ::2])})          == {3, 1}   // not dense: by strides
//
// The rule, in PyTorch's order. When every operand has the result's shape (no
// broadcast; PyTorch's "fast setup"):
// 1. every operand contiguous (an empty one is): contiguous;
// 2. every operand 4-d channels-last contiguous: channels-last;
// 3. every operand non-overlapping and dense, all with the same strides: those
//    strides.
// 4. Otherwise the dims are sorted by the operands' strides, fastest first (the
//    first operand that orders two dims decides; a broadcast dim, stride 0, orders
//    nothing; equal strides put the smaller dim first), and dense strides are
//    built in that order (row-major when the sort leaves the dims as they are).
// A number operand (add(x, 2): PyTorch wraps it in a 0-d tensor) is an operand
// with no dims: it has another shape than a result with dims, so rules 1-3 do not
// apply, and it orders nothing.
#pragma once
#include <span>

#include "symmflow/core/overlap.h"
#include "symmflow/core/shape.h"

namespace symmflow {

// The strides (in elements) of a fresh result of `shape` computed elementwise from
// `operands`, each broadcast to `shape`, in the op's argument order.
Shape elementwise_strides(std::span<const int64_t> shape, std::span<const ViewGeometry> operands);

}  // namespace symmflow
