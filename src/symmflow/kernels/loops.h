// The kernels' strided loops: core/strided.h's for_each_run over N operands that
// share one logical shape (one base pointer and byte strides per operand, stride
// 0 = broadcast), plus the broadcast strides that feed it. Dimensions contiguous
// for every operand are collapsed, so the dense case is one long inner run and the
// compiler can vectorize `fn`.
//
//   for_each_run<2>(shape, {out_ptr, in_ptr}, {out_strides, in_strides},
//                   [](char** p, const int64_t* s, int64_t n) { ... n elements ... });
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "symmflow/core/strided.h"
#include "symmflow/core/tensor.h"

namespace symmflow::kernels {

// Callers outside the kernels spell them kernels::for_each_run, kernels::byte_strides.
using symmflow::byte_strides;
using symmflow::for_each_run;

// Byte strides of `t` viewed at `shape` (broadcast dims get stride 0).
std::vector<int64_t> broadcast_byte_strides(const Tensor& t, std::span<const int64_t> shape);

}  // namespace symmflow::kernels
