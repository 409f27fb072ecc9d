// fused_pointwise's block interpreter (fused_block.h): every op it runs gives
// eager's bits, f32 and f64, on NaN, infinities, signed zeros and denormals, with
// full, row, one-element, strided and bool mask operands, at sizes that leave short blocks
// and rows longer than a block; the blocks are taken for what they run and
// anything else falls back to the tiles (still eager's bits); pairs of steps
// composed into one loop keep the bits, and pairs no kernel takes run step by step.
#include "symmflow/ops/fused_block.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "symmflow/ops/fused_steps.h"
#include "symmflow/ops/fused_testing.h"

namespace symmflow::ops {
namespace {

// values() with the IEEE edge cases spread over it: NaN, +-inf, +-0, the
// smallest denormal, huge values (overflow in exp, x*x) and tiny ones. Each salt
// puts them at other places: where two NaNs of opposite sign meet in a binary
// op, which one survives depends on the operand order of the instruction the
// compiler picked for that element's place in the loop (eager's own loop varies
// along one tensor), so these tests keep NaN meeting numbers.
template <typename T>
void put_specials(Tensor& t, int salt) {
  using L = std::numeric_limits<T>;
  const T specials[] = {L::quiet_NaN(), L::infinity(), -L::infinity(), T(0), -T(0), L::denorm_min(),
                        -L::denorm_min(), L::max(), -L::max(), L::min(), T(88.5), T(-104), T(1), T(-1), T(0.5)};
  T* p = static_cast<T*>(t.data_ptr());
  const int64_t n = t.numel();
  for (int64_t i = salt % 5, k = 0; i < n; i += 5, ++k) p[i] = specials[k % std::size(specials)];
}
Tensor edge_values(Shape shape, DType dtype, int salt) {
  Tensor t = values(std::move(shape), dtype, salt);
  if (dtype == DType::f32) put_specials<float>(t, salt);
  else put_specials<double>(t, salt);
  return t;
}

// The first element whose bits differ, for the failure message.
std::string first_difference(const Tensor& got, const Tensor& want) {
  const Tensor g = kernels::to_dtype(kernels::contiguous(got), DType::f64);
  const Tensor w = kernels::to_dtype(kernels::contiguous(want), DType::f64);
  const Tensor gc = kernels::contiguous(got), wc = kernels::contiguous(want);
  const size_t item = element_size(got.dtype());
  for (int64_t i = 0; i < got.numel(); ++i) {
    const auto* a = static_cast<const unsigned char*>(gc.data_ptr()) + i * item;
    const auto* b = static_cast<const unsigned char*>(wc.data_ptr()) + i * item;
    if (std::memcmp(a, b, item) != 0)
      return fmt::format("element {}: {} vs eager {}", i, static_cast<const double*>(g.data_ptr())[i],
                         static_cast<const double*>(w.data_ptr())[i]);
  }
  return "no element differs";
}

void expect_blocks_give_eagers_bits(const std::vector<Tensor>& inputs, const std::string& program) {
  const auto steps = parse_fused_program(program);
  ASSERT_TRUE(runs_in_blocks(inputs, steps)) << program;
  const Tensor want = eager(inputs, steps);
  // 4 bytes: a block of one element; 64: rows of 53 longer than a block; 4096: the default.
  for (int64_t bytes : {int64_t(4), int64_t(64), int64_t(200), fused::kBlockBytes}) {
    const Tensor got = run_fused_pointwise(inputs, steps, bytes);
    EXPECT_TRUE(same_bits(got, want)) << program << " in blocks of " << bytes << " bytes, "
                                      << inputs[0].type_string() << ": " << first_difference(got, want);
  }
}

// One step of each op the blocks run, on full (x0, x1), row (x2) and 0-dim (x3)
// operands, then a step that reads it back from its scratch block (times x4,
// which has no NaN: sqrt(-1) is a NaN of the other sign than x1's).
const char* const kOneOpPrograms[] = {
    "aten::add.Tensor(x0, x1, 1)", "aten::add.Tensor(x0, x2, 2.5)", "aten::add.Scalar(x0, 0.1, 3)",
    "aten::add.Tensor(x3, x0, -1)", "aten::sub.Tensor(x2, x1, 0.3)", "aten::sub.Scalar(x0, 7, 1)",
    "aten::rsub.Tensor(x0, x1, 2)", "aten::rsub.Scalar(x0, 1, 1)", "aten::mul.Tensor(x0, x3)",
    "aten::mul.Scalar(x0, 0.1)", "aten::div.Tensor(x0, x1)", "aten::div.Scalar(x0, 3)",
    "aten::div.Tensor_mode(x0, x2, 'trunc')", "aten::div.Tensor_mode(x0, x1, 'floor')",
    "aten::div.Scalar_mode(x0, 0.7, None)", "aten::pow.Tensor_Tensor(x0, x1)", "aten::pow.Tensor_Scalar(x0, 2)",
    "aten::pow.Tensor_Scalar(x0, 3.0)", "aten::pow.Tensor_Scalar(x0, 0.5)", "aten::pow.Tensor_Scalar(x0, -1.7)",
    "aten::maximum(x0, x1)", "aten::minimum(x2, x0)", "aten::clamp(x0, -1.5, 2)", "aten::clamp(x0, None, 0.25)",
    "aten::clamp(x0, nan, None)", "aten::clamp_min(x0, 0.5)", "aten::clamp_max(x0, -0.5)", "aten::gelu(x0, 'none')",
    "aten::gelu(x0, 'tanh')", "aten::neg(x0)", "aten::abs(x0)", "aten::relu(x0)", "aten::exp(x0)", "aten::log(x0)",
    "aten::sqrt(x0)", "aten::rsqrt(x0)", "aten::tanh(x0)", "aten::sigmoid(x0)",
    "aten::silu(x0)", "aten::erf(x0)", "aten::reciprocal(x0)", "aten::floor(x0)", "aten::ceil(x0)",
    "aten::round(x0)", "aten::trunc(x0)", "aten::sign(x0)", "aten::log1p(x0)", "aten::expm1(x0)", "aten::log2(x0)",
    "aten::sin(x0)", "aten::cos(x0)",  // huge lanes beside small ones: vec_math.h
};

TEST(FusedBlock, EveryOpItRunsGivesEagersBitsOnEdgeValues) {
  for (DType d : {DType::f32, DType::f64}) {
    // 37 x 53: odd rows, a short last block at every block size.
    const std::vector<Tensor> in = {edge_values({37, 53}, d, 0), edge_values({37, 53}, d, 1),
                                    edge_values({53}, d, 2), values({}, d, 3), values({37, 53}, d, 4)};
    for (const char* op : kOneOpPrograms) {
      expect_blocks_give_eagers_bits(in, op);
      expect_blocks_give_eagers_bits(in, std::string(op) + "; aten::mul.Tensor(t0, x4)");
    }
  }
}

TEST(FusedBlock, ChainsGiveEagersBitsAtOddSizesAndBlockEdges) {
  // t0 and t1 are read twice, far apart: their blocks must outlive the steps between.
  const std::string reuse =
      "aten::add.Tensor(x0, x1, 1); aten::mul.Tensor(t0, t0); aten::sub.Tensor(t1, x0, 1); aten::exp(t0); "
      "aten::div.Tensor(t2, t3); aten::maximum(t4, t1); aten::silu(t5)";
  const std::string bias_relu = "aten::add.Tensor(x0, x1, 1); aten::relu(t0); aten::mul.Scalar(t1, 0.5)";
  const std::string gelu_exp = "aten::add.Tensor(x0, x1, 1); aten::gelu(t0, 'none'); aten::exp(t1)";
  for (DType d : {DType::f32, DType::f64}) {
    for (const Shape& s : {Shape{1}, Shape{7}, Shape{4099}, Shape{1024}, Shape{1025}, Shape{3, 2048}, Shape{2, 5}}) {
      const Tensor x = edge_values(s, d, 0), y = edge_values(s, d, 1);
      expect_blocks_give_eagers_bits({x, y}, reuse);
      expect_blocks_give_eagers_bits({x, y}, gelu_exp);
      if (s.size() == 2) expect_blocks_give_eagers_bits({x, edge_values({s.back()}, d, 2)}, bias_relu);
    }
  }
}

// Which steps the block program composes into the next (compose_pair).
std::vector<bool> composed(const std::vector<Tensor>& in, const std::string& program) {
  const auto steps = parse_fused_program(program);
  const auto types = fused::step_types(in, steps, fused::resolve("test", steps, in.size(), is_fusible_pointwise, ""));
  std::vector<fused::Role> roles;
  for (const Tensor& t : in)
    roles.push_back(t.sizes() == types.back().sizes() ? fused::Role::full
                    : t.numel() == 1                  ? fused::Role::scalar
                                                      : fused::Role::row);
  const auto prog = fused::BlockProgram::compile(steps, types, roles);
  std::vector<bool> into_next;
  if (prog)
    for (const auto& st : prog->steps) into_next.push_back(st.into_next);
  return into_next;
}

TEST(FusedBlock, StepPairsRunAsOneLoopWithEagersBits) {
  // A step only the next reads runs with it: bias + relu, relu then an op with
  // it on either side, rsqrt after or before one, a one-element first operand, a value right of the second
  // op; not two unary ops, a value left of the op, a step read twice, an op
  // outside the pairs. f32 and f64, edge values, rows that leave short blocks.
  const std::pair<const char*, std::vector<bool>> cases[] = {
      {"aten::add.Tensor(x0, x2, 2.5); aten::relu(t0); aten::mul.Scalar(t1, 0.5)", {true, false, false}},
      {"aten::relu(x0); aten::div.Tensor(x1, t0)", {true, false}},
      {"aten::relu(x0); aten::sub.Tensor(t0, x3, 2)", {true, false}},
      {"aten::mul.Tensor(x3, x0); aten::rsub.Tensor(t0, x1, 3)", {true, false}},
      {"aten::sub.Tensor(x0, x1, 0.5); aten::div.Scalar(t0, 3)", {true, false}},
      {"aten::mul.Tensor(x0, x1); aten::rsqrt(t0)", {true, false}},
      {"aten::rsqrt(x0); aten::mul.Tensor(x2, t0)", {true, false}},
      {"aten::rsqrt(x0); aten::relu(t0)", {false, false}},
      {"aten::relu(x0); aten::relu(t0)", {false, false}},
      {"aten::add.Tensor(x0, x1, 1); aten::rsub.Scalar(t0, 2, 1)", {false, false}},
      {"aten::add.Tensor(x0, x1, 1); aten::mul.Tensor(t0, t0)", {false, false}},
      {"aten::exp(x0); aten::mul.Tensor(t0, x1)", {false, false}},
  };
  for (DType d : {DType::f32, DType::f64}) {
    for (const Shape& s : {Shape{37, 53}, Shape{3, 2048}}) {
      const std::vector<Tensor> in = {edge_values(s, d, 0), values(s, d, 1), edge_values({s.back()}, d, 2),
                                      values({}, d, 3)};
      for (const auto& [program, want] : cases) {
        EXPECT_EQ(composed(in, program), want) << program;
        expect_blocks_give_eagers_bits(in, program);
      }
    }
  }
}

TEST(FusedBlock, StridedOperandsAreGatheredWithEagersBits) {
  const Tensor u = edge_values({39, 57}, DType::f32, 3);
  const Tensor slice = u.as_strided({37, 53}, {57, 1}, 2 * 57 + 1);
  const Tensor xt = edge_values({53, 37}, DType::f32, 2).as_strided({37, 53}, {1, 37}, 0);
  expect_blocks_give_eagers_bits({slice, xt}, "aten::mul.Tensor(x0, x1); aten::exp(t0); aten::sub.Tensor(t1, x0, 1)");
  // Column slices only (halo2d's stencil operands): read in place, by blocks that
  // stay within one row, beside a full input and a row.
  const Tensor west = u.as_strided({37, 53}, {57, 1}, 57), east = u.as_strided({37, 53}, {57, 1}, 57 + 2);
  const Tensor full = edge_values({37, 53}, DType::f32, 6), row = edge_values({53}, DType::f32, 7);
  expect_blocks_give_eagers_bits({slice, west, east, full, row},
                                 "aten::add.Tensor(x1, x2, 1); aten::mul.Scalar(x0, 4.0); aten::sub.Tensor(t0, t1, 1); "
                                 "aten::mul.Tensor(t2, x4); aten::add.Tensor(x3, t3, 0.2)");
  const Tensor every_third = edge_values({3000}, DType::f64, 4).as_strided({1000}, {3}, 1);
  expect_blocks_give_eagers_bits({every_third, values({1000}, DType::f64, 5)},
                                 "aten::sub.Tensor(x0, x1, 1); aten::sigmoid(t0)");
}

TEST(FusedBlock, ComparisonsAndWhereGiveEagersBits) {
  for (DType d : {DType::f32, DType::f64}) {
    const Tensor x = edge_values({37, 53}, d, 0), y = edge_values({37, 53}, d, 1);
    const Tensor mask = kernels::lt(values({37, 53}, d, 2), Scalar(0.5)), one = kernels::gt(values({}, d, 3), Scalar(0.0));
    const std::vector<Tensor> in = {x, y, mask, one, edge_values({53}, d, 4)};
    for (const char* cmp : {"eq", "ne", "lt", "le", "gt", "ge"}) {
      expect_blocks_give_eagers_bits(in, fmt::format("aten::{}.Tensor(x0, x1); aten::where.self(t0, x0, x4)", cmp));
      expect_blocks_give_eagers_bits(in, fmt::format("aten::{}.Scalar(x0, 0.5); aten::where.ScalarOther(t0, x1, -2.5)", cmp));
    }
    expect_blocks_give_eagers_bits(in, "aten::where.self(x2, x0, x1)");
    expect_blocks_give_eagers_bits(in, "aten::where.ScalarSelf(x2, 0.1, x1); aten::exp(t0)");
    expect_blocks_give_eagers_bits(in, "aten::where.self(x3, x0, x4)");  // a one-element mask
    expect_blocks_give_eagers_bits(in, "aten::mul.Tensor(x0, x1); aten::ge.Tensor(t0, x4); aten::where.ScalarOther(t1, t0, 0)");
  }
}

TEST(FusedBlock, OtherDtypesOpsAndOperandsFallBackToTheTiles) {
  const Tensor x = values({6, 100}, DType::f32, 0), y = values({6, 100}, DType::f32, 1);
  struct Case {
    std::vector<Tensor> inputs;
    const char* program;
  };
  const Case cases[] = {
      {{kernels::to_dtype(x, DType::bf16), kernels::to_dtype(y, DType::bf16)}, "aten::add.Tensor(x0, x1, 1)"},
      {{x, values({}, DType::f64, 2)}, "aten::mul.Tensor(x0, x1)"},  // an operand eager converts
      {{x, kernels::gt(values({100}, DType::f32, 3), Scalar(0.0)), y}, "aten::where.self(x1, x0, x2)"},  // a bool row
      {{x, y}, "aten::gt.Tensor(x0, x1)"},  // a bool result
      {{x}, "aten::leaky_relu(x0, 0.2)"},
      {{x}, "aten::clamp(x0, nan, 1.0)"},  // a NaN bound that makes every element NaN
      {{x}, "aten::clamp_min(x0, nan)"},
  };
  for (const Case& c : cases) {
    const auto steps = parse_fused_program(c.program);
    EXPECT_TRUE(runs_tiled(c.inputs, steps)) << c.program;
    EXPECT_FALSE(runs_in_blocks(c.inputs, steps)) << c.program;
    EXPECT_TRUE(same_bits(run_fused_pointwise(c.inputs, steps), eager(c.inputs, steps))) << c.program;
  }
}

TEST(FusedBlock, TheRegisteredOpTakesTheBlocksAndKeepsEagersBits) {
  // Through the dispatcher, as a compiled program calls it (the cached program's
  // plan, made on the first call), twice, then with a new signature.
  const std::string program = "aten::add.Tensor(x0, x1, 1); aten::relu(t0); aten::mul.Scalar(t1, 0.5)";
  const Operator& op = Dispatcher::instance().get("symmflow::fused_pointwise");
  OpContext ctx(DispatchKey::CPU);
  for (const Shape& s : {Shape{64, 300}, Shape{64, 300}, Shape{7, 5000}}) {
    const std::vector<Tensor> in = {edge_values(s, DType::f32, 0), edge_values({s.back()}, DType::f32, 1)};
    ASSERT_TRUE(runs_in_blocks(in, parse_fused_program(program)));
    const std::vector<IValue> args = {IValue(in), IValue(program)};
    const Tensor got = op.call(ctx, args).at(0).to_tensor();
    EXPECT_TRUE(same_bits(got, eager(in, parse_fused_program(program))));
  }
}

}  // namespace
}  // namespace symmflow::ops
