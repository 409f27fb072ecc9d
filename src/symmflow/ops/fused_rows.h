// symmflow::fused_rows: a row-wise chain (elementwise ops and reductions over the
// last dim, keepdim, whose per-row results broadcast back over the row) run as
// one loop over blocks of whole rows (what passes/fuse_rows makes of RMSNorm,
// a written-out softmax or layer_norm).
//
//   %y = symmflow::fused_rows([%x, %w], "aten::pow.Tensor_Scalar(x0, 2); aten::mean.dim(t0, [-1], true, None);
//          aten::add.Tensor(t1, 1e-06, 1); aten::rsqrt(t2); aten::mul.Tensor(x0, t3); aten::mul.Tensor(t4, x1)")
//
// The program is fused_pointwise's (ops/fused_pointwise.h), whose steps may also
// be a reduction over dims [-1] with keepdim true: aten::sum.dim_IntList,
// aten::mean.dim (dtype None), aten::amax, aten::amin.
//
// f32/f64 chains of fused_block's elementwise steps and row sums/means run on
// raw blocks (fused_rows_raw.h: no dispatch per step). Otherwise,
// bitwise equal to eager by construction: per block of rows (about
// kFusedRowBlockBytes of the widest shape), each step calls the same registered
// kernel that eager calls, on [rows, C] / [rows, 1] views of the block, into
// scratch that stays in cache. A reduction kernel sums a row in the one order
// kernels/sum_order.h fixes for every layout of the same values, and an extreme
// is order-free, so a row's result does not depend on which rows share its
// block; the elementwise kernels compute each element from its operands alone.
// Inputs the blocks can take: the widest shape [..., C] contiguous, its per-row
// shape [..., 1] contiguous, a contiguous row [C] (leading dims of 1), or one
// element. Anything else runs the steps unfused, on whole tensors (still eager's
// result).
#pragma once
#include <span>
#include <string_view>
#include <vector>

#include "symmflow/core/tensor.h"
#include "symmflow/ops/fused_pointwise.h"

namespace symmflow::ops {

// Bytes of the widest shape per block of rows when each step calls its kernel
// (chains the raw path does not take; at least one row): larger than
// fused_pointwise's tiles because a row chain has more steps, each a dispatch per
// block, and a reduction's set-up costs more than an elementwise op's. A block's
// input, intermediates and result (RMSNorm: about 4 blocks) stay near one
// core's 1 MiB L2. Measured with bench/kernels.py --clock cpu at load 13-15
// (docs/performance.md): RMSNorm 1M fused took ~1900 us with 16 KiB blocks,
// ~880 with 64 KiB, ~630-1100 with 256 KiB, ~950 with 512 KiB.
inline constexpr int64_t kFusedRowBlockBytes = 256 * 1024;

// Bytes of the widest shape per block of rows on the raw path (fused_rows_raw.h),
// where a step costs its loop only: one row of 1024 f32, so a block's input,
// intermediates and result stay in L1 (RMSNorm 1M in a C++ loop, medians:
// 275-283 us with 4 KiB blocks, 326 with 8 KiB, 385 with 32 KiB; docs/performance.md).
inline constexpr int64_t kRawRowBlockBytes = 4096;

// Whether `full_name` is a reduction fused_rows takes as a step (over [-1], keepdim).
bool is_row_reduction(std::string_view full_name);

// A step fused_rows takes: a fusible elementwise op or a row reduction.
bool is_row_step(std::string_view full_name);

// Whether these inputs run block by block (else the steps run on whole tensors).
bool runs_in_row_blocks(std::span<const Tensor> inputs, const std::vector<FusedStep>& steps);

// Whether they also take the raw path (fused_rows_raw.h: f32/f64, elementwise
// steps fused_block runs, row sums and means), else each step's kernel runs per block.
bool runs_on_raw_rows(std::span<const Tensor> inputs, const std::vector<FusedStep>& steps);

// Runs the steps on `inputs` (meta inputs: the result's type only). `block_bytes`
// (bytes of the widest shape per block, at least one row) is exposed for tests
// that cut small tensors into many blocks.
Tensor run_fused_rows(std::span<const Tensor> inputs, const std::vector<FusedStep>& steps,
                      int64_t block_bytes = kFusedRowBlockBytes);

}  // namespace symmflow::ops
