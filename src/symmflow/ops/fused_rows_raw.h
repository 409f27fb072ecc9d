// fused_rows' raw path: an f32 or f64 row chain run over blocks of whole rows
// with no dispatcher call, view or allocation per block. Each elementwise step is
// fused_block's raw kernel (eager's own dense loop, fused::compile_step): over
// the whole block when it reads blocks only, else one call per row, a per-row
// result or per-row input read as that row's one value (eager's broadcast loop
// computes each element from the same two values). A row sum or mean is
// kernels/sum_order.h's ordered sum of the row, then (mean) the division by the
// row length in the dtype, and a row amax/amin is lane_extreme.h's or the ordered
// rule: reduce.cc's dense-row paths, so bitwise eager's.
//
// Two consecutive full steps that fused_block.h's compose_pair takes (add, sub,
// mul, div, relu), the first read by the second only, run as one loop (RMSNorm's x * rstd * weight, layer_norm's
// (x - mean) * rstd * weight): the intermediate stays in a register, each op
// still rounds as its kernel does.
//
// Takes chains whose inputs and steps all have the chain's dtype, rows of at
// least 2 elements, and reductions over a block of full rows; anything else (bool masks, bf16, a step the blocks do not
// run) compiles to nullopt and fused_rows calls each step's kernel instead.
#pragma once
#include <optional>
#include <span>
#include <vector>

#include "symmflow/core/tensor.h"
#include "symmflow/ops/fused_block.h"

namespace symmflow::ops::fused {

// How a block of rows reads an input of a [..., C] chain (fused_rows' row_layout):
// full: [..., C] contiguous; per_row: [..., 1] contiguous; row: a contiguous [C]
// broadcast over the rows; scalar: one element.
enum class RowRole : uint8_t { full, per_row, row, scalar };

struct RawRowProgram {
  struct Step {
    enum class Kind : uint8_t { elementwise, sum, mean, amax, amin } kind = Kind::elementwise;
    BlockProgram::Step step;  // elementwise: kernel, params, sources; sum, mean: args[0] the rows summed
    bool full = false;        // result [k, C] per block of k rows (else [k, 1])
    bool per_row_call = false;  // a full step that reads a per-row value or a row input: one call per row
  };
  DType dtype = DType::f32;
  int64_t cols = 0;
  std::vector<RowRole> roles;
  std::vector<Step> steps;

  // `types`: the inputs' then every step's type; `shape`: the widest shape [..., C].
  static std::optional<RawRowProgram> compile(const std::vector<FusedStep>& steps, std::span<const Tensor> types,
                                              const Shape& shape, std::span<const RowRole> roles);

  // Writes the chain's result into `out` (contiguous), `block_rows` rows at a time.
  void run(std::span<const Tensor> inputs, const Tensor& out, int64_t block_rows) const;
};

}  // namespace symmflow::ops::fused
