// Tests of the input fill against values computed apart from this code (Python
// integers, mod 2^64, straight from the formula in docs/ir.md).
#include "symmflow/exec/input_fill.h"

#include <gtest/gtest.h>

#include <cmath>

namespace symmflow::exec {
namespace {

struct Expected {
  uint64_t seed;
  int input, rank;
  uint64_t h[6];       // input_hash for i = 0..5
  double floating[6];  // (h % 256 - 128) / 16
  int64_t integer[6];  // h % 201 - 100
  bool boolean[6];     // h % 2
};

const Expected kCases[] = {
    {0, 0, 0,
     {0xf2fea582, 0x8d3f7d8c, 0x47051a63, 0x3d407380, 0x3f0ea871, 0x590516e8},
     {0.125, 0.75, -1.8125, 0.0, -0.9375, 6.5},
     {25, 72, -73, -59, 24, 92},
     {0, 0, 1, 0, 1, 0}},
    {0, 2, 1,
     {0x98f6d305, 0x791c20a6, 0x0aca1f85, 0x87a59da4, 0x2c4aefaa, 0x2ddf46c1},
     {-7.6875, 2.375, 0.3125, 2.25, 2.625, 4.0625},
     {85, -86, 12, -22, -35, -31},
     {1, 0, 1, 0, 0, 1}},
    {7, 0, 0,
     {0xd33f9d35, 0x71d4197b, 0x2f5bd923, 0x2d2c63e0, 0x98a5ab9e, 0xa9c801dd},
     {-4.6875, -0.3125, -5.8125, 6.0, 1.875, 5.8125},
     {45, -59, 38, 6, 42, 53},
     {1, 1, 1, 0, 0, 1}},
    {7, 2, 1,
     {0x72546256, 0xcf30318f, 0x0aed8bc0, 0xd9047176, 0x65bbfd8d, 0xfb5d381b},
     {-2.625, 0.9375, 4.0, -0.625, 0.8125, -6.3125},
     {-27, 86, -71, -2, 21, 81},
     {0, 1, 0, 0, 1, 1}},
    {7, 0, 1,
     {0x428f98de, 0x61bc01cd, 0x90665aa4, 0x3615be5e, 0x63e671b6, 0x1dffdfa0},
     {5.875, 4.8125, 2.25, -2.125, 3.375, 2.0},
     {-18, -86, 10, -47, -67, 72},
     {0, 1, 0, 0, 0, 0}},
};

// Element i of t (contiguous) as a double.
double at(const Tensor& t, int64_t i) {
  double v = 0;
  SF_DISPATCH(t.dtype(), v = double(t.data<T>()[i]));
  return v;
}

TEST(InputFill, HashMatchesTheFormula) {
  for (const Expected& e : kCases)
    for (int i = 0; i < 6; ++i)
      EXPECT_EQ(input_hash(e.seed, e.input, e.rank, uint64_t(i)), e.h[i])
          << "seed " << e.seed << " input " << e.input << " rank " << e.rank << " i " << i;
}

TEST(InputFill, EveryDTypeIsExact) {
  const DType all[] = {DType::f32, DType::f64, DType::bf16, DType::f16,
                       DType::i32, DType::i64, DType::boolean};
  for (const Expected& e : kCases)
    for (DType d : all) {
      SCOPED_TRACE(fmt::format("{} seed {} input {} rank {}", dtype_name(d), e.seed, e.input,
                               e.rank));
      Tensor t = Tensor::empty({2, 3}, d);
      fill_input(t, e.seed, e.input, e.rank);
      for (int i = 0; i < 6; ++i) {
        const double want = is_floating(d) ? e.floating[i]
                            : d == DType::boolean ? double(e.boolean[i])
                                                  : double(e.integer[i]);
        EXPECT_EQ(at(t, i), want) << "element " << i;
      }
    }
}

TEST(InputFill, ValuesStayInTheirRanges) {
  // Every floating value is k/16 for an integer k in [-128, 127], so bf16 (8
  // significant bits) holds it exactly.
  Tensor bf = Tensor::empty({4096}, DType::bf16);
  Tensor f64 = Tensor::empty({4096}, DType::f64);
  fill_input(bf, 3, 1, 2);
  fill_input(f64, 3, 1, 2);
  for (int i = 0; i < 4096; ++i) {
    const double v = f64.data<double>()[i];
    EXPECT_EQ(double(float(bf.data<BFloat16>()[i])), v);
    EXPECT_EQ(v * 16, std::floor(v * 16));
    EXPECT_GE(v, -8.0);
    EXPECT_LE(v, 7.9375);
  }
  Tensor i32 = Tensor::empty({4096}, DType::i32);
  fill_input(i32, 3, 1, 2);
  for (int i = 0; i < 4096; ++i) {
    EXPECT_GE(i32.data<int32_t>()[i], -100);
    EXPECT_LE(i32.data<int32_t>()[i], 100);
  }
}

TEST(InputFill, StridedTargetUsesLogicalIndex) {
  const Expected& e = kCases[3];  // seed 7, input 2, rank 1
  // A 2x3 logical view, transposed in memory, inside a larger buffer.
  Tensor buf = Tensor::empty({20}, DType::f32);
  for (int i = 0; i < 20; ++i) buf.data<float>()[i] = 100.0f;
  Tensor view = buf.as_strided({2, 3}, {1, 4}, 5);  // element (r, c) at 5 + r + 4c
  fill_input(view, e.seed, e.input, e.rank);
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 3; ++c)
      EXPECT_EQ(buf.data<float>()[5 + r + 4 * c], float(e.floating[r * 3 + c])) << r << "," << c;
  // Nothing outside the view is touched.
  int untouched = 0;
  for (int i = 0; i < 20; ++i) untouched += buf.data<float>()[i] == 100.0f;
  EXPECT_EQ(untouched, 14);

  // 0-d: element 0.
  Tensor scalar = Tensor::empty({}, DType::i64);
  fill_input(scalar, e.seed, e.input, e.rank);
  EXPECT_EQ(scalar.data<int64_t>()[0], e.integer[0]);
  // Empty: nothing to write, no error.
  fill_input(Tensor::empty({0, 4}, DType::f32), 0, 0, 0);
}

TEST(InputFill, ScalarInputs) {
  for (const Expected& e : kCases) {
    IValue i = scalar_input(DType::i64, e.seed, e.input, e.rank);
    ASSERT_TRUE(i.is_int());
    EXPECT_EQ(i.to_int(), e.integer[0]);
    IValue d = scalar_input(DType::f64, e.seed, e.input, e.rank);
    ASSERT_TRUE(d.is_double());
    EXPECT_EQ(d.to_double(), e.floating[0]);
    IValue b = scalar_input(DType::boolean, e.seed, e.input, e.rank);
    ASSERT_TRUE(b.is_bool());
    EXPECT_EQ(b.to_bool(), e.boolean[0]);
  }
  try {
    scalar_input(DType::f32, 0, 3, 0);
    ADD_FAILURE() << "f32 scalar accepted";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("i64, f64 or bool, got f32 (input 3)"),
              std::string::npos)
        << err.what();
  }
  EXPECT_THROW(fill_input(Tensor::empty({2}), 0, -1, 0), Error);
  EXPECT_THROW(fill_input(Tensor::meta({2}, DType::f32), 0, 0, 0), Error);
}

}  // namespace
}  // namespace symmflow::exec
