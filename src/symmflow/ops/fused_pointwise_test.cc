// symmflow::fused_pointwise: its program text round-trips, bad programs are
// errors that name the column, and its result is eager's op-by-op result bit for
// bit, in blocks and in tiles, whatever the tile size (down to 64 bytes: many tiles, a short last one),
// for full, row, one-element and 0-dim operands, and for operands it cannot tile.
#include "symmflow/ops/fused_pointwise.h"

#include <gtest/gtest.h>

#include "symmflow/kernels/copy.h"
#include "symmflow/kernels/factories.h"
#include "symmflow/kernels/pointwise.h"
#include "symmflow/library/dispatcher.h"
#include "symmflow/ops/fused_testing.h"

namespace symmflow::ops {
namespace {

void expect_eager_bits_at_every_tile_size(const std::vector<Tensor>& inputs, std::string_view program) {
  const auto steps = parse_fused_program(program);
  const Tensor want = eager(inputs, steps);
  for (bool blocks : {true, false}) {  // f32/f64 chains: the blocks (fused_block.h), then the tiles
    for (int64_t tile : {int64_t(64), int64_t(200), int64_t(1000), int64_t(4096), kFusedTileBytes, int64_t(1) << 24}) {
      const Tensor got = run_fused_pointwise(inputs, steps, tile, blocks);
      EXPECT_TRUE(same_bits(got, want)) << program << " with tiles of " << tile << " bytes (blocks: " << blocks
                                        << "): " << got.type_string() << " vs " << want.type_string();
      EXPECT_EQ(got.strides(), want.strides()) << program << ": eager's layout (core/layout.h)";
    }
  }
}

TEST(FusedPointwise, ProgramTextRoundTrips) {
  const std::string text =
      "aten::add.Tensor(x0, x1, 1); aten::gelu(t0, 'tanh'); aten::clamp(t1, None, 2.5); "
      "aten::mul.Scalar(t2, 1e-07); aten::add.Scalar(t3, nan, -inf); aten::where.ScalarOther(x2, t4, true)";
  const auto steps = parse_fused_program(text);
  ASSERT_EQ(steps.size(), 6u);
  EXPECT_EQ(steps[0].args[2].constant.kind(), IValue::Kind::Int);
  EXPECT_EQ(steps[2].args[1].constant.kind(), IValue::Kind::None);
  EXPECT_EQ(steps[3].args[1].constant.to_double(), 1e-07);
  EXPECT_EQ(steps[5].args[0].kind, FusedOperand::Kind::input);
  EXPECT_EQ(steps[5].args[1].kind, FusedOperand::Kind::step);
  EXPECT_EQ(format_fused_program(steps), text);
}

TEST(FusedPointwise, AFloatConstantStaysAFloat) {
  const auto steps = parse_fused_program("aten::mul.Scalar(x0, 2.0)");
  EXPECT_EQ(steps[0].args[1].constant.kind(), IValue::Kind::Double);
  EXPECT_EQ(format_fused_program(steps), "aten::mul.Scalar(x0, 2.0)");
}

TEST(FusedPointwise, MalformedProgramNamesTheColumn) {
  EXPECT_THROW(
      {
        try {
          parse_fused_program("aten::exp(x0); aten::sin(t1)");
        } catch (const Error& e) {
          EXPECT_STREQ(e.what(),
                       "fused_pointwise: program column 26: expected an earlier step below 1, found 't1)' (the "
                       "program: aten::exp(x0); aten::sin(t1))");
          throw;
        }
      },
      Error);
  EXPECT_THROW(parse_fused_program("aten::exp(x0"), Error);
  EXPECT_THROW(parse_fused_program(""), Error);
  EXPECT_THROW(parse_fused_program("aten::mul.Scalar(x0, 2x)"), Error);
}

TEST(FusedPointwise, RejectsAStepThatIsNotElementwise) {
  Tensor x = values({4, 4}, DType::f32, 0);
  try {
    run_fused_pointwise(std::vector<Tensor>{x, x}, parse_fused_program("aten::mm(x0, x1)"));
    FAIL() << "mm was run as a fused step";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("step 0 is aten::mm, which is not an elementwise op"), std::string::npos)
        << e.what();
  }
}

TEST(FusedPointwise, RowBiasGeluExpMatchesEagerAtEveryTileSize) {
  // 37 x 53: rows that no power of two divides, a short last tile.
  expect_eager_bits_at_every_tile_size(
      {values({37, 53}, DType::f32, 0), values({53}, DType::f32, 1), values({1, 1}, DType::f32, 2)},
      "aten::add.Tensor(x0, x1, 1); aten::gelu(t0, 'none'); aten::exp(t1); aten::mul.Tensor(t2, x2)");
}

TEST(FusedPointwise, FlatChainsOfEveryDtypeMatchEager) {
  for (DType d : {DType::f32, DType::f64, DType::bf16, DType::f16}) {
    SCOPED_TRACE(dtype_name(d));
    expect_eager_bits_at_every_tile_size(
        {values({3, 333}, d, 0), values({3, 333}, d, 3)},
        "aten::sub.Tensor(x0, x1, 2); aten::div.Scalar(t0, 3.0); aten::tanh(t1); aten::sigmoid(t2); aten::gelu(t3, 'tanh'); "
        "aten::silu(t4); aten::mul.Tensor(t5, x0)");
  }
}

TEST(FusedPointwise, ZeroDimOperandKeepsItsPromotion) {
  // A 0-dim f64 does not promote an f32 tensor; a [1] f64 does (PyTorch's
  // result_type): the tiles keep each operand's category.
  Tensor x = values({5, 300}, DType::f32, 0);
  Tensor z0 = values({}, DType::f64, 4), z1 = values({1}, DType::f64, 4);
  const char* program = "aten::mul.Tensor(x0, x1); aten::exp(t0)";
  expect_eager_bits_at_every_tile_size({x, z0}, program);
  expect_eager_bits_at_every_tile_size({x, z1}, program);
  EXPECT_EQ(run_fused_pointwise(std::vector<Tensor>{x, z0}, parse_fused_program(program)).dtype(), DType::f32);
  EXPECT_EQ(run_fused_pointwise(std::vector<Tensor>{x, z1}, parse_fused_program(program)).dtype(), DType::f64);
}

TEST(FusedPointwise, IntegerInputsPromoteAsInEager) {
  Tensor k = kernels::to_dtype(values({6, 100}, DType::f32, 0), DType::i64);
  expect_eager_bits_at_every_tile_size({k, values({100}, DType::f32, 1)},
                                       "aten::add.Scalar(x0, 1, 1); aten::div.Scalar(t0, 7); aten::sub.Tensor(t1, x1, 1); "
                                       "aten::gt.Scalar(t2, 0.0); aten::where.self(t3, t2, x1)");
}

TEST(FusedPointwise, OperandsItCannotTileRunUnfused) {
  // A column [37, 1] and a transposed rank-3 operand: no tile view takes them,
  // so the steps run on whole tensors (still eager's bits).
  Tensor x = values({37, 53}, DType::f32, 0);
  Tensor col = values({37, 1}, DType::f32, 1);
  const std::string_view program = "aten::add.Tensor(x0, x1, 1); aten::mul.Tensor(t0, x2); aten::exp(t1)";
  EXPECT_FALSE(runs_tiled(std::vector<Tensor>{x, col, x}, parse_fused_program(program)));
  expect_eager_bits_at_every_tile_size({x, col, x}, program);
  Tensor y = values({2, 5, 7}, DType::f32, 0);
  Tensor yt = values({2, 7, 5}, DType::f32, 2).as_strided({2, 5, 7}, {35, 1, 5}, 0);
  const std::string_view program3 = "aten::mul.Tensor(x0, x1); aten::exp(t0)";
  EXPECT_FALSE(runs_tiled(std::vector<Tensor>{y, yt}, parse_fused_program(program3)));
  expect_eager_bits_at_every_tile_size({y, yt}, program3);
}

// A stencil on column slices of a grid (strided, rank 2), a transposed
// operand and a strided rank-1 view: tiled by whole rows, each tile a view of
// the input in place, and eager's bits at every tile size (a tile of 64 bytes
// is still one whole row).
TEST(FusedPointwise, StridedOperandsAtRankOneAndTwoAreTiledInPlaceWithEagersBits) {
  Tensor u = values({39, 57}, DType::f32, 3);
  auto slice = [&](int64_t r, int64_t c) { return u.as_strided({37, 53}, {57, 1}, r * 57 + c); };
  const std::vector<Tensor> stencil{slice(0, 2), slice(2, 2), slice(1, 0), slice(1, 4), slice(1, 2)};
  const std::string_view program =
      "aten::add.Tensor(x0, x1, 1); aten::add.Tensor(x2, x3, 1); aten::add.Tensor(t0, t1, 1); "
      "aten::mul.Scalar(x4, 4.0); aten::sub.Tensor(t2, t3, 1); aten::mul.Scalar(t4, 0.2); aten::add.Tensor(x4, t5, 1)";
  EXPECT_TRUE(runs_tiled(stencil, parse_fused_program(program)));
  expect_eager_bits_at_every_tile_size(stencil, program);
  Tensor xt = values({53, 37}, DType::f32, 2).as_strided({37, 53}, {1, 37}, 0);
  expect_eager_bits_at_every_tile_size({u.as_strided({37, 53}, {57, 1}, 0), xt},
                                       "aten::mul.Tensor(x0, x1); aten::exp(t0)");
  Tensor every_third = values({3000}, DType::f32, 4).as_strided({1000}, {3}, 1);
  expect_eager_bits_at_every_tile_size({every_third, values({1000}, DType::f32, 5)},
                                       "aten::sub.Tensor(x0, x1, 1); aten::sigmoid(t0)");
}

// Counts what the thread's allocator serves (regular memory underneath).
class CountingAllocator : public Allocator {
 public:
  std::shared_ptr<Storage> allocate(size_t nbytes) override {
    sizes.push_back(nbytes);
    return regular_allocator().allocate(nbytes);
  }
  std::vector<size_t> sizes;
};

TEST(FusedPointwise, AllocatesOnlyItsResultFromTheCallersAllocator) {
  // The compiled program's allocator hands a node's planned buffer to the first
  // allocation of the result's size: that must be the result. Intermediates live
  // in the per-thread scratch (tiled) or on the heap (whole), on every run.
  const std::vector<Tensor> row = {values({64, 300}, DType::f32, 0), values({300}, DType::f32, 1)};
  const std::vector<Tensor> col = {row[0], values({64, 1}, DType::f32, 2)};
  const auto steps = parse_fused_program("aten::add.Tensor(x0, x1, 1); aten::gelu(t0, 'none'); aten::exp(t1)");
  EXPECT_TRUE(runs_tiled(row, steps));
  EXPECT_FALSE(runs_tiled(col, steps));  // a column: no tile view takes it
  for (const auto* in : {&row, &row, &col}) {
    CountingAllocator counting;
    AllocatorGuard guard(counting);
    Tensor r = run_fused_pointwise(*in, steps);
    EXPECT_EQ(counting.sizes, (std::vector<size_t>{64 * 300 * 4}));
  }
}

TEST(FusedPointwise, TilesTakeFullRowAndOneElementOperands) {
  const auto steps = parse_fused_program("aten::add.Tensor(x0, x1, 1); aten::mul.Tensor(t0, x2)");
  const Tensor x = values({4, 6, 8}, DType::f32, 0);
  auto tiled = [&](Tensor b, Tensor s) { return runs_tiled(std::vector<Tensor>{x, b, s}, steps); };
  EXPECT_TRUE(tiled(values({8}, DType::f32, 1), values({}, DType::f32, 2)));
  EXPECT_TRUE(tiled(values({1, 1, 8}, DType::f32, 1), values({1, 1, 1}, DType::f32, 2)));
  EXPECT_TRUE(tiled(x, values({1}, DType::f32, 2)));
  EXPECT_FALSE(tiled(values({6, 8}, DType::f32, 1), values({}, DType::f32, 2)));  // a [6, 8] plane
  EXPECT_FALSE(tiled(values({16}, DType::f32, 1).as_strided({8}, {2}, 0), values({}, DType::f32, 2)));  // strided
  // An intermediate smaller than the result (exp of a row, then a broadcast).
  EXPECT_FALSE(runs_tiled(std::vector<Tensor>{values({8}, DType::f32, 1), x},
                          parse_fused_program("aten::exp(x0); aten::add.Tensor(t0, x1, 1)")));
}

// A chain whose first operand is transposed: eager's result takes its layout
// (strides [1, 37]), so the fused result has it too (the steps on whole tensors,
// tiles view a row-major result), in its Meta type and in its run.
TEST(FusedPointwise, ResultInItsOperandsPermutedLayoutHasEagersStridesAndBits) {
  Tensor xt = values({53, 37}, DType::f32, 2).as_strided({37, 53}, {1, 37}, 0);
  Tensor y = values({37, 53}, DType::f32, 3);
  const std::string_view program = "aten::mul.Tensor(x0, x1); aten::exp(t0); aten::add.Scalar(t1, 1.5, 1)";
  expect_eager_bits_at_every_tile_size({xt, y}, program);
  EXPECT_EQ(run_fused_pointwise(std::vector<Tensor>{xt, y}, parse_fused_program(program)).strides(), (Shape{1, 37}));
  Tensor meta = run_fused_pointwise(std::vector<Tensor>{Tensor::meta({37, 53}, DType::f32, {1, 37}), y},
                                    parse_fused_program(program));
  EXPECT_TRUE(meta.is_meta());
  EXPECT_EQ(meta.strides(), (Shape{1, 37}));
}

TEST(FusedPointwise, MetaInputsGiveTheResultType) {
  Tensor x = Tensor::meta({8, 16}, DType::bf16), b = Tensor::meta({16}, DType::f32);
  Tensor r = run_fused_pointwise(std::vector<Tensor>{x, b}, parse_fused_program("aten::add.Tensor(x0, x1, 1); aten::exp(t0)"));
  EXPECT_TRUE(r.is_meta());
  EXPECT_EQ(r.type_string(), "f32[8, 16]");
}

}  // namespace
}  // namespace symmflow::ops
