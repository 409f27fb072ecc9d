// symmflow::fused_pointwise: a chain of elementwise aten ops run as one loop over
// tiles of its result (what passes/fuse_pointwise makes of such a chain).
//
//   %y = symmflow::fused_pointwise([%x, %b], "aten::add.Tensor(x0, x1, 1); aten::gelu(t0, 'none'); aten::exp(t1)")
//
// The program is the chain's steps in program order, each an op overload and its
// bound arguments in schema order: `xI` is input I, `tJ` is step J's result,
// anything else a constant (`1`, `2.5`, `nan`, `true`, `None`, `'tanh'`). The
// last step's result is the op's result.
//
// Bitwise equal to eager by construction, on one of three paths:
// - Blocks (ops/fused_block.h): an f32 or f64 chain of the ops listed there runs
//   as raw loops over blocks of 4 KiB of the result, each step eager's own loop
//   over the same functors, the last step writing the result.
// - Tiles: any other chain the tiles can view runs, per tile (kFusedTileBytes of
//   the result), each step's registered kernel (the one eager calls) on views of
//   the tile, into a scratch that stays in cache.
// - Whole tensors: the steps one by one, as eager (inputs no tile can view).
// The kernels' per-element math depends only on the element's value
// (kernels/vec_math.h, -ffp-contract=off), so cutting the loop into blocks or
// tiles changes nothing but where the intermediates live; tiles still start on
// whole rows of a row-broadcast operand, so each kernel's inner runs are eager's.
// Inputs blocks and tiles take are: the result's shape, contiguous, or at rank 1
// or 2 with any strides (tiles are then whole rows, each a view of the input in
// place; blocks gather them); one element (a scalar tensor, any rank); or a
// contiguous row broadcast over the leading dims (a bias [C] of a [..., C]
// result).
#pragma once
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "symmflow/core/ivalue.h"
#include "symmflow/core/tensor.h"

namespace symmflow::ops {

// One argument of a step: input `index`, step `index`'s result, or a constant.
struct FusedOperand {
  enum class Kind : uint8_t { input, step, constant };
  Kind kind = Kind::constant;
  int index = 0;
  IValue constant;
};

struct FusedStep {
  std::string op;  // the overload's full name: "aten::add.Tensor"
  std::vector<FusedOperand> args;
};

// Result bytes one tile covers: small enough that a tile's inputs, scratch and
// result stay in L2 (a 3-step chain of two inputs: about 6 tiles, 384 KiB), large
// enough that each step's per-call dispatch is a small fraction. Measured on this
// project's 2-core EPYC (1 MiB L2 per core): bias + relu + mul on 1M f32 took
// ~1190 us with 16 KiB tiles and ~630 us with 64 KiB (docs/performance.md).
inline constexpr int64_t kFusedTileBytes = 64 * 1024;

// Whether `full_name` (an overload) is an elementwise op whose kernel computes
// each element from the same element of its operands alone, so a chain of them
// may be cut into tiles.
bool is_fusible_pointwise(std::string_view full_name);

// The program text (see above) and back. A malformed program is an Error naming
// the column and what was expected.
std::string format_fused_program(const std::vector<FusedStep>& steps);
std::vector<FusedStep> parse_fused_program(std::string_view text);

// Whether these inputs run tile by tile or in blocks (else the steps run on whole
// tensors), and whether in blocks.
bool runs_tiled(std::span<const Tensor> inputs, const std::vector<FusedStep>& steps);
bool runs_in_blocks(std::span<const Tensor> inputs, const std::vector<FusedStep>& steps);

// Runs the steps on `inputs` (meta inputs: the result's type only). For tests:
// `tile_bytes` cuts small tensors into many tiles, or blocks (of at most
// fused::kBlockBytes); `blocks` false runs tiles where blocks would run.
Tensor run_fused_pointwise(std::span<const Tensor> inputs, const std::vector<FusedStep>& steps,
                           int64_t tile_bytes = kFusedTileBytes, bool blocks = true);

}  // namespace symmflow::ops
