// The block interpreter of symmflow::fused_pointwise (fused_pointwise.h): an f32
// or f64 chain run over blocks of a few KiB of the result, each step one raw loop
// over the block (no dispatcher call, no view, no allocation per block), from its
// operands' blocks into a block that stays in L1; the last step writes the result.
//
//   auto prog = fused::BlockProgram::compile(steps, types, roles);  // once per input signature
//   if (prog) prog->run(inputs, out, fused::kBlockBytes);
//
// Bitwise equal to eager: every step's loop is eager's (pointwise_impl.h's
// run_dense over the same functors, vec::map for the SLEEF ones) and takes its
// constants as eager converts them (scalar_value: a Scalar operand, add's alpha,
// clamp's bounds). Every step and every tensor a step reads has the one dtype T
// (but a where's bool condition: a comparison's result, or a bool input of the
// result's shape or of one element), so no promotion happens inside the chain. An element's bits depend on its
// operands' values only (-ffp-contract=off, vec_math.h), not on where a block
// starts. Anything else (another dtype, an op or an operand not listed in
// fused_block.cc) compiles to nullopt and runs on fused_pointwise's tiles.
// A step that only the next step reads (add, sub, mul, div, relu, rsqrt) runs with it
// as one loop (compose_pair): one store and reload of a block less per pair.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "symmflow/core/tensor.h"
#include "symmflow/ops/fused_pointwise.h"

namespace symmflow::ops::fused {

// How tiles and blocks read an input of a [..., C] result: full: its shape,
// contiguous; strided: its shape at rank 1 or 2, any strides (rows of unit stride
// are read in place, by blocks within one row; others are gathered per block);
// row: a contiguous [C] broadcast over the leading dims; scalar: one element.
enum class Role : uint8_t { full, strided, row, scalar };

// Result bytes of one block: each step's block stays in L1 (a 32 KiB L1 holds a
// handful of them) and a block is long enough that a step's call costs a few
// percent of its loop (docs/performance.md, "Fused chains in blocks").
inline constexpr int64_t kBlockBytes = 4096;
// Blocks of a chain with an f32 gelu where it is oneDNN's primitive (a CPU
// without AVX2 + FMA: vec::gelu_erf_calls_onednn), an execution of a few
// microseconds per call, are larger; they still stay in L2.
inline constexpr int64_t kOneDnnBlockBytes = 32 * 1024;

// One operand of a step on one block: its elements, or (p == nullptr) the value
// every element has (a Scalar constant or a one-element input), as a double that
// holds the T value exactly.
struct BlockArg {
  const void* p = nullptr;
  double v = 0;
};
// out[i] = f(args[k][i]...) for i < n; `params` are the functor's constants.
using BlockKernel = void (*)(const BlockArg* args, const double* params, void* out, int64_t n);

struct BlockProgram {
  struct Source {
    enum class Kind : uint8_t { input, step, constant } kind = Kind::constant;
    int index = 0;
    double value = 0;  // a constant, converted to T as eager converts it
  };
  struct Step {
    BlockKernel kernel = nullptr;
    std::vector<Source> args;  // in the kernel's order
    double params[4] = {0, 0, 0, 0};  // the functor's constants (a pair: the first's two, then the second's)
    int buffer = -1;           // scratch block it writes (the last step: the result)
    // add, sub (rsub: its sources swapped), mul, true div, relu, rsqrt: a step
    // compose_pair can compose (its sources in the kernel's order, alpha in params[0]).
    enum class Arith : uint8_t { none, add, sub, mul, div, relu, rsqrt } arith = Arith::none;
    bool into_next = false;  // composed into the next step, which runs both: runs nothing, has no block
  };
  DType dtype = DType::f32;
  std::vector<Role> roles;  // per input
  std::vector<Step> steps;
  int buffers = 0;          // scratch blocks a block needs
  int64_t block_bytes = kBlockBytes;

  // `types`: the inputs' then every step's type (the Meta kernels'); `roles`: how
  // each input is read. nullopt: the blocks do not run this chain.
  static std::optional<BlockProgram> compile(const std::vector<FusedStep>& steps, std::span<const Tensor> types,
                                             std::span<const Role> roles);

  // Writes the chain's result into `out` (contiguous, the result's type), in
  // blocks of block_bytes, or fewer (`max_block_bytes`: tests that want many blocks).
  void run(std::span<const Tensor> inputs, const Tensor& out, int64_t max_block_bytes = INT64_MAX) const;
};

// One step as a BlockProgram step, for a caller that runs its own loop over the
// kernels (fused_rows: rows of a block, the per-row results read as one value
// per row). `types`: the inputs' then every step's type, all of one dtype (f32 or
// f64); `roles`: how this step reads each input; `value_steps[j]`: whether this
// step reads step j's result as one value for all its elements (else a block).
// The step's args keep their sources; nullopt: not a step the blocks run.
std::optional<BlockProgram::Step> compile_step(const FusedStep& step, std::span<const Tensor> types,
                                               std::span<const Role> roles, std::span<const bool> value_steps);

// Composes step `index` (`first`) into the next step (`second`), the only one
// that reads its result, when both are Step::arith ops and a pair kernel has
// their operands: second then runs both as one loop, first's result in a register
// (out[i] = g(f(a[i], b[i]), c[i]), g(c[i], f(...)), g(f(a[i])) ...), each element
// still through each op's element function and rounding, so the bits are the two
// kernels'; first is marked into_next. `block(source)`: whether the steps read
// that source as a block (else one value). A pair composes no further. Returns
// whether it composed (else nothing changed: a's and b's both values, c a value
// left of the op, two unary ops, another dtype than f32/f64).
bool compose_pair(DType dtype, int index, BlockProgram::Step& first, BlockProgram::Step& second,
                  const std::function<bool(const BlockProgram::Source&)>& block);

}  // namespace symmflow::ops::fused
