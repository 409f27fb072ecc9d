// symmflow::fused_rows: RMSNorm, a written-out softmax and layer_norm run block
// by block give eager's op-by-op result bit for bit, whatever the block size (one
// row per block up to the whole tensor), for rows no vector width divides, rows
// longer than a summation block, NaN and inf rows and every float dtype; a
// reduction over another dim or without keepdim is refused; operands a block
// cannot view run unfused, still eager's result; pairs of steps the raw path
// composes into one loop keep the bits; the registered op plans again when its
// inputs change.
#include "symmflow/ops/fused_rows.h"

#include <gtest/gtest.h>

#include <limits>

#include "symmflow/kernels/views.h"
#include "symmflow/ops/fused_rows_raw.h"
#include "symmflow/ops/fused_steps.h"
#include "symmflow/ops/fused_testing.h"

namespace symmflow::ops {
namespace {

constexpr const char* kRmsNorm =
    "aten::pow.Tensor_Scalar(x0, 2); aten::mean.dim(t0, [-1], true, None); aten::add.Scalar(t1, 1e-06, 1); "
    "aten::rsqrt(t2); aten::mul.Tensor(x0, t3); aten::mul.Tensor(t4, x1)";
constexpr const char* kSoftmax =
    "aten::amax(x0, [-1], true); aten::sub.Tensor(x0, t0, 1); aten::exp(t1); "
    "aten::sum.dim_IntList(t2, [-1], true, None); aten::div.Tensor(t2, t3)";
constexpr const char* kLayerNorm =
    "aten::mean.dim(x0, [-1], true, None); aten::sub.Tensor(x0, t0, 1); aten::mul.Tensor(t1, t1); "
    "aten::mean.dim(t2, [-1], true, None); aten::add.Scalar(t3, 1e-05, 1); aten::rsqrt(t4); "
    "aten::mul.Tensor(t1, t5); aten::mul.Tensor(t6, x1); aten::add.Tensor(t7, x2, 1)";

void expect_eager_bits_at_every_block_size(const std::vector<Tensor>& inputs, std::string_view program) {
  const auto steps = parse_fused_program(program);
  ASSERT_TRUE(runs_in_row_blocks(inputs, steps)) << program;
  const Tensor want = eager(inputs, steps);
  for (int64_t block : {int64_t(1), int64_t(200), int64_t(1000), int64_t(4096), kFusedRowBlockBytes, int64_t(1) << 24}) {
    const Tensor got = run_fused_rows(inputs, steps, block);
    EXPECT_TRUE(same_bits(got, want)) << program << " in blocks of " << block << " bytes: " << got.type_string()
                                      << " vs " << want.type_string();
    EXPECT_EQ(got.strides(), want.strides()) << program << ": eager's layout (core/layout.h)";
  }
}

// Rows of special values: a NaN, +inf, -inf, all -inf, all equal, a huge value.
Tensor with_special_rows(Shape shape) {
  Tensor x = values(shape, DType::f32, 4);
  const int64_t cols = shape.back();
  float* p = x.data<float>();
  const float inf = std::numeric_limits<float>::infinity();
  p[0 * cols + 3] = std::numeric_limits<float>::quiet_NaN();
  p[1 * cols + 5] = inf;
  p[2 * cols + 0] = -inf;
  for (int64_t j = 0; j < cols; ++j) p[3 * cols + j] = -inf;
  for (int64_t j = 0; j < cols; ++j) p[4 * cols + j] = 1.5f;
  p[5 * cols + cols - 1] = 3e38f;
  return x;
}

TEST(FusedRows, RmsNormMatchesEagerAtEveryBlockSize) {
  // 37 x 53: rows that no vector width divides, a short last block.
  expect_eager_bits_at_every_block_size({values({37, 53}, DType::f32, 0), values({53}, DType::f32, 1)}, kRmsNorm);
}

TEST(FusedRows, RmsNormOfEveryFloatDtypeMatchesEager) {
  for (DType d : {DType::f32, DType::f64, DType::bf16, DType::f16}) {
    SCOPED_TRACE(dtype_name(d));
    expect_eager_bits_at_every_block_size({values({3, 5, 130}, d, 0), values({130}, d, 1)}, kRmsNorm);
  }
}

TEST(FusedRows, RowsLongerThanASummationBlockMatchEager) {
  // 4099 > kernels/sum_order.h's 2048-element cascade block: a row's sum spans
  // blocks, and a block of rows is smaller than one row at the small sizes.
  expect_eager_bits_at_every_block_size({values({3, 4099}, DType::f32, 2), values({4099}, DType::f32, 3)}, kRmsNorm);
  expect_eager_bits_at_every_block_size({values({3, 4099}, DType::f32, 2)}, kSoftmax);
}

TEST(FusedRows, SoftmaxWrittenOutMatchesEagerWithNanAndInfRows) {
  expect_eager_bits_at_every_block_size({with_special_rows({9, 37})}, kSoftmax);
  expect_eager_bits_at_every_block_size({with_special_rows({2, 6, 19})}, kSoftmax);
}

TEST(FusedRows, LayerNormWrittenOutMatchesEager) {
  expect_eager_bits_at_every_block_size(
      {values({33, 100}, DType::f32, 0), values({100}, DType::f32, 1), values({100}, DType::f32, 2)}, kLayerNorm);
  expect_eager_bits_at_every_block_size(
      {with_special_rows({7, 21}), values({21}, DType::f32, 1), values({21}, DType::f32, 2)}, kLayerNorm);
}

TEST(FusedRows, ChainEndingInAReductionGivesPerRowResult) {
  // A sum of squares plus a per-row input [R, 1] and a one-element tensor.
  const std::vector<Tensor> in = {values({20, 70}, DType::f32, 0), values({20, 1}, DType::f32, 1),
                                  values({1}, DType::f32, 2)};
  const char* program =
      "aten::mul.Tensor(x0, x0); aten::sum.dim_IntList(t0, [-1], true, None); aten::add.Tensor(t1, x1, 1); "
      "aten::mul.Tensor(t2, x2); aten::amin(x0, [-1], true); aten::maximum(t3, t4)";
  expect_eager_bits_at_every_block_size(in, program);
  EXPECT_EQ(run_fused_rows(in, parse_fused_program(program)).sizes(), (Shape{20, 1}));
}

TEST(FusedRows, FloatChainsOfReductionsAndBlockStepsTakeTheRawPath) {
  // f32 and f64 RMSNorm, softmax and layer_norm, and a chain that reads a per-row input
  // [R, 1] and a one-element one, run on raw blocks (fused_rows_raw.h)...
  for (DType d : {DType::f32, DType::f64}) {
    SCOPED_TRACE(dtype_name(d));
    const std::vector<Tensor> rms = {values({37, 53}, d, 0), values({53}, d, 1)};
    EXPECT_TRUE(runs_on_raw_rows(rms, parse_fused_program(kRmsNorm)));
    expect_eager_bits_at_every_block_size(rms, kRmsNorm);
    const std::vector<Tensor> ln = {values({33, 100}, d, 0), values({100}, d, 1), values({100}, d, 2)};
    EXPECT_TRUE(runs_on_raw_rows(ln, parse_fused_program(kLayerNorm)));
    EXPECT_TRUE(runs_on_raw_rows(std::vector<Tensor>{values({9, 37}, d, 0)}, parse_fused_program(kSoftmax)));
  }
  const std::vector<Tensor> in = {values({20, 70}, DType::f32, 0), values({20, 1}, DType::f32, 1),
                                  values({1}, DType::f32, 2)};
  const char* program =
      "aten::mul.Tensor(x0, x0); aten::sum.dim_IntList(t0, [-1], true, None); aten::add.Tensor(t1, x1, 1); "
      "aten::mul.Tensor(t2, x2); aten::sub.Tensor(x0, t3, 1); aten::div.Tensor(t4, x1)";
  EXPECT_TRUE(runs_on_raw_rows(in, parse_fused_program(program)));
  expect_eager_bits_at_every_block_size(in, program);
  expect_eager_bits_at_every_block_size({with_special_rows({9, 37}), values({37}, DType::f32, 1)}, kRmsNorm);
}

// Which steps the raw program composes into the next (fused_rows_raw.h's pairs).
std::vector<bool> composed(const std::vector<Tensor>& in, const char* program) {
  const auto steps = parse_fused_program(program);
  const auto types = fused::step_types(in, steps, fused::resolve("test", steps, in.size(), is_row_step, ""));
  std::vector<fused::RowRole> roles;
  for (const Tensor& t : in)
    roles.push_back(t.sizes() == in[0].sizes() ? fused::RowRole::full
                    : t.numel() == 1           ? fused::RowRole::scalar
                    : t.sizes().back() == 1    ? fused::RowRole::per_row
                                               : fused::RowRole::row);
  const auto raw = fused::RawRowProgram::compile(steps, types, in[0].sizes(), roles);
  std::vector<bool> into_next;
  if (raw)
    for (const auto& st : raw->steps) into_next.push_back(st.step.into_next);
  return into_next;
}

TEST(FusedRows, StepPairsRunAsOneLoopWithEagersBits) {
  // RMSNorm's x * rstd * w, layer_norm's (x - mean) * rstd * w, and pairs of every
  // arithmetic op with alpha, the first's result on either side of the second and
  // a one-element or per-row third operand, on NaN and inf rows, f32 and f64.
  const char* kPairs =
      "aten::amax(x0, [-1], true); aten::sub.Tensor(x0, t0, 2); aten::div.Tensor(x1, t1); "
      "aten::sum.dim_IntList(t2, [-1], true, None); aten::add.Tensor(t2, t3, -0.5); aten::mul.Tensor(t4, x2); "
      "aten::rsub.Tensor(t3, x0, 3); aten::sub.Tensor(t6, x3, 1); aten::div.Tensor(t5, t7)";
  for (DType d : {DType::f32, DType::f64}) {
    SCOPED_TRACE(dtype_name(d));
    for (const Shape& s : {Shape{9, 37}, Shape{2, 6, 19}}) {
      const Tensor x = d == DType::f32 ? with_special_rows(s) : values(s, d, 4);
      const Shape per_row = [&] { Shape p = s; p.back() = 1; return p; }();
      const std::vector<Tensor> rms = {x, values({s.back()}, d, 1)};
      // mean + eps into rsqrt (per-row steps), x * rstd into * w (full ones).
      EXPECT_EQ(composed(rms, kRmsNorm), (std::vector<bool>{false, false, true, false, true, false}));
      expect_eager_bits_at_every_block_size(rms, kRmsNorm);
      const std::vector<Tensor> ln = {x, values({s.back()}, d, 1), values({s.back()}, d, 2)};
      // t1 is read twice: not composed; var + eps into rsqrt, t6 into * w are.
      EXPECT_EQ(composed(ln, kLayerNorm),
                (std::vector<bool>{false, false, false, false, true, false, true, false, false}));
      expect_eager_bits_at_every_block_size(ln, kLayerNorm);
      const std::vector<Tensor> pairs = {x, values(s, d, 2), values({1}, d, 3), values(per_row, d, 5)};
      EXPECT_EQ(composed(pairs, kPairs),
                (std::vector<bool>{false, true, false, false, true, false, true, false, false}));
      expect_eager_bits_at_every_block_size(pairs, kPairs);
    }
  }
}

TEST(FusedRows, PairsNoPairKernelTakesRunStepByStep) {
  // A value on the left of the second op (rsub of a constant): no pair kernel,
  // each step its own loop; the per-row pair beside it (a per-row sum * one
  // element, then - a per-row input) composes.
  const char* program =
      "aten::sum.dim_IntList(x0, [-1], true, None); aten::mul.Tensor(x0, x1); aten::rsub.Scalar(t1, 3, 0.5); "
      "aten::mul.Tensor(t0, x1); aten::sub.Tensor(t3, x2, 1); aten::mul.Tensor(t2, t4)";
  const std::vector<Tensor> in = {with_special_rows({9, 37}), values({1}, DType::f32, 1),
                                  values({9, 1}, DType::f32, 2)};
  EXPECT_EQ(composed(in, program), (std::vector<bool>{false, false, false, true, false, false}));
  expect_eager_bits_at_every_block_size(in, program);
}

TEST(FusedRows, ChainsTheRawPathCannotRunCallEachStepsKernel) {
  // ...but a bf16 chain, a mixed-dtype one, rows of one element, a comparison's
  // bool mask: each step's kernel per block, still eager's bits.
  const std::vector<Tensor> masked = {values({9, 37}, DType::f32, 0)};
  const char* kMasked = "aten::amax(x0, [-1], true); aten::lt.Tensor(x0, t0); aten::where.ScalarOther(t1, x0, 0)";
  const std::vector<Tensor> bf = {values({3, 130}, DType::bf16, 0), values({130}, DType::bf16, 1)};
  const std::vector<Tensor> mixed = {values({6, 40}, DType::f32, 0), values({40}, DType::f64, 1)};
  const std::vector<Tensor> narrow = {values({12, 1}, DType::f32, 0), values({1}, DType::f32, 1)};
  for (const auto& [in, program] : {std::pair{masked, kMasked}, std::pair{bf, kRmsNorm}, std::pair{mixed, kRmsNorm},
                                    std::pair{narrow, kRmsNorm}}) {
    const auto steps = parse_fused_program(program);
    EXPECT_TRUE(runs_in_row_blocks(in, steps)) << program;
    EXPECT_FALSE(runs_on_raw_rows(in, steps)) << program << " " << in[0].type_string();
    expect_eager_bits_at_every_block_size(in, program);
  }
}

TEST(FusedRows, RefusesAReductionOverAnotherDimOrWithoutKeepdim) {
  const std::vector<Tensor> in = {values({4, 6}, DType::f32, 0)};
  for (const char* program : {"aten::sum.dim_IntList(x0, [0], true, None); aten::exp(t0)",
                              "aten::amax(x0, [-1], false); aten::exp(t0)"}) {
    try {
      run_fused_rows(in, parse_fused_program(program));
      ADD_FAILURE() << "ran " << program;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("must reduce dims [-1] with keepdim true"), std::string::npos) << e.what();
    }
  }
}

TEST(FusedRows, RefusesAStepThatIsNeitherElementwiseNorARowReduction) {
  const Tensor x = values({4, 4}, DType::f32, 0);
  try {
    run_fused_rows(std::vector<Tensor>{x, x}, parse_fused_program("aten::mm(x0, x1)"));
    FAIL() << "mm was run as a fused step";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("fused_rows: step 0 is aten::mm"), std::string::npos) << e.what();
  }
}

TEST(FusedRows, OperandsABlockCannotViewRunUnfused) {
  // A transposed input: not contiguous, so not viewable as blocks of rows.
  const Tensor t = kernels::transpose(values({53, 37}, DType::f32, 0), 0, 1);
  const std::vector<Tensor> in = {t, values({53}, DType::f32, 1)};
  const auto steps = parse_fused_program(kRmsNorm);
  EXPECT_FALSE(runs_in_row_blocks(in, steps));
  EXPECT_TRUE(same_bits(run_fused_rows(in, steps), eager(in, steps)));
}

TEST(FusedRows, ProgramTextTakesIntLists) {
  const std::string text = "aten::amax(x0, [-1], true); aten::sum.dim_IntList(t0, [0, 2], false, None); aten::amin(t1, [], true)";
  const auto steps = parse_fused_program(text);
  EXPECT_EQ(steps[0].args[1].constant.to_int_list(), (std::vector<int64_t>{-1}));
  EXPECT_EQ(steps[1].args[1].constant.to_int_list(), (std::vector<int64_t>{0, 2}));
  EXPECT_TRUE(steps[2].args[1].constant.to_int_list().empty());
  EXPECT_EQ(format_fused_program(steps), text);
  EXPECT_THROW(parse_fused_program("aten::amax(x0, [-1, x], true)"), Error);
  EXPECT_THROW(parse_fused_program("aten::amax(x0, [-1, true)"), Error);
}

TEST(FusedRows, TheRegisteredOpRePlansWhenItsInputsChange) {
  // Through the dispatcher, as a compiled program calls it: the plan made on the
  // first call serves the second; new sizes, a new dtype, and the same sizes with
  // other strides (a transposed square: unfused) each get their own.
  const Operator& op = Dispatcher::instance().get("symmflow::fused_rows");
  OpContext ctx(DispatchKey::CPU);
  const std::string program = kRmsNorm;
  const Tensor square = values({40, 40}, DType::f32, 0);
  const std::vector<std::vector<Tensor>> calls = {
      {values({64, 300}, DType::f32, 0), values({300}, DType::f32, 1)},
      {with_special_rows({64, 300}), values({300}, DType::f32, 1)},
      {values({7, 5000}, DType::f64, 0), values({5000}, DType::f64, 1)},
      {values({7, 50}, DType::bf16, 0), values({50}, DType::bf16, 1)},
      {square, values({40}, DType::f32, 1)},
      {kernels::transpose(square, 0, 1), values({40}, DType::f32, 1)}};
  for (const std::vector<Tensor>& in : calls) {
    const std::vector<IValue> args = {IValue(in), IValue(program)};
    const Tensor got = op.call(ctx, args).at(0).to_tensor();
    EXPECT_TRUE(same_bits(got, eager(in, parse_fused_program(program)))) << in[0].type_string();
  }
}

TEST(FusedRows, MetaInputsGiveTheResultType) {
  const std::vector<Tensor> in = {Tensor::meta({6, 10}, DType::bf16), Tensor::meta({10}, DType::bf16)};
  const Tensor r = run_fused_rows(in, parse_fused_program(kRmsNorm));
  EXPECT_TRUE(r.is_meta());
  EXPECT_EQ(r.sizes(), (Shape{6, 10}));
  EXPECT_EQ(r.dtype(), DType::bf16);
}

}  // namespace
}  // namespace symmflow::ops
