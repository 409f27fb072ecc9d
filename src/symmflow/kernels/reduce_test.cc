#include "symmflow/kernels/reduce.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "symmflow/kernels/copy.h"
#include "symmflow/kernels/sum_order.h"
#include "symmflow/kernels/views.h"
#include "symmflow/kernels/kernel_testing.h"

namespace symmflow::kernels {
namespace {

using testing::from;
using testing::iota;
using testing::values;

const DType kAll[] = {DType::f32, DType::f64, DType::bf16, DType::f16,
                      DType::i32, DType::i64, DType::boolean};

TEST(Reduce, SumAllDimsEveryDType) {
  for (DType dt : kAll) {
    Tensor a = iota({2, 3}, dt);  // bool: 0 1 1 1 1 1
    Tensor s = sum(a);
    EXPECT_EQ(s.dim(), 0);
    EXPECT_EQ(s.dtype(), is_floating(dt) ? dt : DType::i64) << dtype_name(dt);
    EXPECT_EQ(s.item(), dt == DType::boolean ? 5.0 : 15.0) << dtype_name(dt);
  }
}

TEST(Reduce, SumOverDimsNegativeAndKeepdim) {
  Tensor a = iota({2, 3, 4});  // a[i][j][k] = 12i + 4j + k
  Tensor s0 = sum(a, {0});
  EXPECT_EQ(s0.sizes(), (Shape{3, 4}));
  EXPECT_EQ(values(s0), (std::vector<double>{12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34}));
  Tensor s = sum(a, {0, -1});
  EXPECT_EQ(s.sizes(), (Shape{3}));
  // j: sum over i < 2, k < 4 of (12i + 4j + k) = 4*12 + 8*4j + 2*6 = 60 + 32j
  EXPECT_EQ(values(s), (std::vector<double>{60, 92, 124}));
  Tensor k = sum(a, {-1, 0}, /*keepdim=*/true);
  EXPECT_EQ(k.sizes(), (Shape{1, 3, 1}));
  EXPECT_EQ(values(k), (std::vector<double>{60, 92, 124}));
  Tensor k1 = sum(a, {1}, true);
  EXPECT_EQ(k1.sizes(), (Shape{2, 1, 4}));
  EXPECT_EQ(values(k1), (std::vector<double>{12, 15, 18, 21, 48, 51, 54, 57}));
  EXPECT_EQ(sum(a, {}, true).sizes(), (Shape{1, 1, 1}));
  EXPECT_EQ(sum(a, {0, 1, 2}).item(), 276.0);
  EXPECT_THROW(sum(a, {3}), Error);
  EXPECT_THROW(sum(a, {1, -2}), Error);  // repeated
}

TEST(Reduce, NonContiguousInput) {
  Tensor a = iota({3, 4});
  Tensor at = transpose(a, 0, 1);  // [4, 3]
  EXPECT_EQ(values(sum(at, {1})), (std::vector<double>{12, 15, 18, 21}));
  EXPECT_EQ(values(sum(at, {0})), (std::vector<double>{6, 22, 38}));
  Tensor s = slice(a, 1, 1, {}, 2);  // columns 1, 3
  EXPECT_EQ(values(sum(s, {0})), (std::vector<double>{15, 21}));
  Tensor e = expand(from({1, 2}, {2, 1}), {2, 5});
  EXPECT_EQ(values(sum(e, {1})), (std::vector<double>{5, 10}));
  EXPECT_EQ(values(amax(at, {1})), (std::vector<double>{8, 9, 10, 11}));
}

TEST(Reduce, SumDTypeArgAndIntAccumulation) {
  Tensor a = from({1.5, 2.5, 3.75}, {3});
  EXPECT_EQ(sum(a, {}, false, DType::f64).dtype(), DType::f64);
  EXPECT_EQ(sum(a, {}, false, DType::f64).item(), 7.75);
  EXPECT_EQ(sum(a, {}, false, DType::i64).item(), 6.0);  // converted to int first
  // i32 sums into i64 without overflow.
  Tensor big = from({2147483647.0, 2147483647.0}, {2}, DType::i32);
  Tensor s = sum(big);
  EXPECT_EQ(s.dtype(), DType::i64);
  EXPECT_EQ(s.data<int64_t>()[0], int64_t(2) * 2147483647);
  EXPECT_EQ(sum(big, {}, false, DType::i32).dtype(), DType::i32);
}

TEST(Reduce, HalfTypesAccumulateInFloat) {
  // 1 + 256 * 1/256 in bf16 step by step would stall at 2 (bf16 has 8 bits);
  // accumulated in float the sum is exact: 1 + 2048 * 2^-8 = 9.
  std::vector<double> v(2049, 1.0 / 256);
  v[0] = 1.0;
  for (DType dt : {DType::bf16, DType::f16}) {
    Tensor s = sum(from(v, {2049}, dt));
    EXPECT_EQ(s.dtype(), dt);
    EXPECT_EQ(s.item(), 9.0) << dtype_name(dt);
  }
}

// f32 reductions accumulate in float, as PyTorch's: 16 x 3e38 overflows to inf (a
// double accumulator gave a finite sum, and a mean of 3e38).
TEST(Reduce, Float32AccumulatesInFloat) {
  Tensor big = from(std::vector<double>(16, 3e38), {16});
  EXPECT_EQ(sum(big).item(), INFINITY);
  EXPECT_EQ(mean(big).item(), INFINITY);
  Tensor m = contiguous(expand(from({3e38}, {1, 1}), {16, 16}));
  for (double v : values(mean(m, {0}))) EXPECT_EQ(v, INFINITY);  // reduced dim outer
  for (double v : values(mean(m, {1}))) EXPECT_EQ(v, INFINITY);  // reduced dim inner
  EXPECT_EQ(sum(from({3e38, 3e38, -3e38}, {3})).item(), INFINITY);
  // A wider dtype= or an f64 input still sums in double; bf16/f16 in float.
  EXPECT_EQ(sum(big, {}, false, DType::f64).item(), 16 * double(float(3e38)));
  EXPECT_EQ(sum(from(std::vector<double>(16, 3e38), {16}, DType::bf16)).item(), INFINITY);
  EXPECT_EQ(sum(from(std::vector<double>(16, 60000), {16}, DType::f16), {}, false, DType::f32).item(), 960000);
  // The float sum is a fixed cascade, not a running sum: 2^25 ones are exact (a
  // running float sum stops at 2^24), and 0.1 summed 10^6 times stays close.
  Tensor ones = expand(from({1}, {1}), {int64_t(1) << 25});
  EXPECT_EQ(sum(ones).item(), double(int64_t(1) << 25));
  Tensor tenth = expand(from({0.1}, {1}), {1000000});
  EXPECT_NEAR(sum(tenth).item(), 100000.0, 1.0);
  EXPECT_NEAR(mean(tenth).item(), 0.1, 1e-6);
}

TEST(Reduce, Deterministic) {
  std::vector<double> v(10007);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(double(i)) * 1e3;
  Tensor a = from(v, {10007});
  float first = sum(a).data<float>()[0];
  for (int r = 0; r < 5; ++r) EXPECT_EQ(sum(a).data<float>()[0], first);
  // The loop order depends on the layout (reduced dims outer or inner), the
  // summation order does not: both layouts give bitwise the same result.
  for (DType dt : {DType::f32, DType::bf16, DType::f16}) {
    Tensor x = to_dtype(view(slice(a, 0, 0, 10000), {1000, 10}), dt);
    Tensor xt = contiguous(transpose(x, 0, 1));  // [10, 1000]
    for (auto [p, q] : {std::pair{sum(x, {0}), sum(xt, {1})}, std::pair{amax(x, {0}), amax(xt, {1})},
                        std::pair{mean(x, {0}), mean(xt, {1})}}) {
      ASSERT_EQ(p.nbytes(), q.nbytes());
      EXPECT_EQ(std::memcmp(p.data_ptr(), q.data_ptr(), p.nbytes()), 0) << dtype_name(dt);
    }
  }
}

// amax/amin over dim 0 run a vmaxps loop while no element is a NaN and the ordered
// rule otherwise; either way each column gets the bits the row loop gives the same
// numbers: the first of tied +-0, the first NaN (its sign too), infinities.
TEST(Reduce, ColumnExtremesGiveTheRowLoopsBitsWithAndWithoutNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (DType dt : {DType::f32, DType::f64}) {
    for (bool with_nan : {false, true}) {
      const int64_t rows = 50, cols = 37;
      std::vector<double> v(size_t(rows * cols));
      for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(double(i)) * 10;
      for (int64_t r = 0; r < rows; ++r) v[size_t(r * cols + 3)] = r % 2 ? 0.0 : -0.0;  // ties of +-0
      v[size_t(7 * cols + 5)] = inf;
      v[size_t(9 * cols + 6)] = -inf;
      if (with_nan) {
        v[size_t(11 * cols + 8)] = -nan;
        v[size_t(20 * cols + 8)] = nan;
        v[size_t(0 * cols + 36)] = nan;
      }
      const Tensor x = to_dtype(from(v, {rows, cols}), dt);
      const Tensor xt = contiguous(transpose(x, 0, 1));
      for (auto [p, q] : {std::pair{amax(x, {0}), amax(xt, {1})}, std::pair{amin(x, {0}), amin(xt, {1})}}) {
        ASSERT_EQ(p.nbytes(), q.nbytes());
        EXPECT_EQ(std::memcmp(p.data_ptr(), q.data_ptr(), p.nbytes()), 0) << dtype_name(dt) << " nan " << with_nan;
      }
      if (with_nan) {
        EXPECT_TRUE(std::signbit(to_dtype(amax(x, {0}), DType::f64).data<double>()[8]));  // -NaN, the first
      }
      EXPECT_TRUE(std::signbit(to_dtype(amax(x, {0}), DType::f64).data<double>()[3]));  // -0, the first
    }
  }
}

// An input in L2 runs the columns by pieces of 8 vectors in registers (64 f32 or
// 32 f64 columns), the columns past the last piece row by row: both must give the
// row loop's bits, with a NaN in a piece (also in row 0, which starts the
// extremes) or in the tail, ties of +-0 and infinities in both.
TEST(Reduce, ColumnExtremesInRegisterPiecesGiveTheRowLoopsBits) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const int64_t rows = 46, cols = 150;  // f32: 2 pieces and 22 columns; f64: 4 pieces and 22; -0 first, +0 last
  for (DType dt : {DType::f32, DType::f64}) {
    for (int nan_at : {-1, 5 * int(cols) + 40, 40, 44 * int(cols) + 140}) {  // none, a piece, row 0, the tail
      std::vector<double> v(size_t(rows * cols));
      for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(double(i)) * 10;
      for (int64_t c : {3, 130})
        for (int64_t r = 0; r < rows; ++r) v[size_t(r * cols + c)] = r % 2 ? 0.0 : -0.0;
      v[size_t(7 * cols + 5)] = inf, v[size_t(9 * cols + 6)] = -inf, v[size_t(8 * cols + 135)] = -inf;
      if (nan_at >= 0) v[size_t(nan_at)] = -nan;
      const Tensor x = to_dtype(from(v, {rows, cols}), dt);
      const Tensor xt = contiguous(transpose(x, 0, 1));
      for (auto [p, q] : {std::pair{amax(x, {0}), amax(xt, {1})}, std::pair{amin(x, {0}), amin(xt, {1})}}) {
        ASSERT_EQ(p.nbytes(), q.nbytes());
        EXPECT_EQ(std::memcmp(p.data_ptr(), q.data_ptr(), p.nbytes()), 0) << dtype_name(dt) << " nan at " << nan_at;
      }
      const Tensor mx = to_dtype(amax(x, {0}), DType::f64);
      EXPECT_TRUE(std::signbit(mx.data<double>()[3]) && std::signbit(mx.data<double>()[130]));  // -0, the first
      if (nan_at >= 0) {
        EXPECT_TRUE(std::isnan(mx.data<double>()[nan_at % cols])) << nan_at;
      }
    }
  }
}

// Past one cascade block of sum_order.h (4096 elements): the three loops (lanes
// of all columns side by side, a strided gather, a dense row) give the order's bits.
TEST(Reduce, SumFollowsSumOrderInEveryLoop) {
  const int64_t rows = 5000;
  std::vector<double> v(size_t(rows * 3));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(double(i)) * std::pow(10.0, double(i % 7) - 3);
  Tensor x = from(v, {rows, 3});
  Tensor xt = transpose(x, 0, 1);  // [3, rows], strided
  Tensor dense = contiguous(xt);
  const Tensor by_col = sum(x, {0}), gathered = sum(xt, {1}), by_row = sum(dense, {1});
  for (int64_t c = 0; c < 3; ++c) {
    const float want = ordered_sum(dense.data<float>() + c * rows, rows);
    for (const Tensor* t : {&by_col, &gathered, &by_row})
      EXPECT_EQ(std::memcmp(t->data<float>() + c, &want, sizeof want), 0) << c;
  }
}

// Sums over dim 0 run by blocks of columns (the last one partial) when the input
// is small, whole rows otherwise, with the cascade when there are 4096 rows or
// more: each column must still be its own sum in sum_order.h's order.
template <typename V>
void expect_column_sums_in_sum_order(DType dt, int64_t rows, int64_t cols) {
  std::vector<double> v(size_t(rows * cols));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(double(i)) * std::pow(10.0, double(i % 7) - 3);
  Tensor x = from(v, {rows, cols}, dt);
  Tensor dense = contiguous(transpose(x, 0, 1));
  const Tensor s = sum(x, {0});
  for (int64_t c = 0; c < cols; ++c) {
    const V want = ordered_sum(dense.data<V>() + c * rows, rows);
    EXPECT_EQ(std::memcmp(s.data<V>() + c, &want, sizeof want), 0) << dtype_name(dt) << " " << rows << "x" << cols
                                                                    << " column " << c;
  }
}

// Fewer than 4096 rows of an input in L2: the lanes of 8-vector pieces of
// columns in registers (300 x 200 f32: three pieces and 8 columns by blocks),
// also with fewer rows than lanes, a partial last group of 32 rows, and fewer
// columns than one piece.
TEST(Reduce, ColumnSumsFollowSumOrderInEveryBlock) {
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{300, 200}, {4100, 20}, {40, 4000}, {7, 130}, {33, 64},
                            {95, 257}, {31, 40}}) {
    expect_column_sums_in_sum_order<float>(DType::f32, rows, cols);
    expect_column_sums_in_sum_order<double>(DType::f64, rows, cols);
  }
}

// Infinities and NaNs in register pieces: each column's sum is still sum_order's
// (inf - inf and a NaN give its NaN, bit for bit).
TEST(Reduce, ColumnSumsWithInfinitiesAndNaNFollowSumOrder) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const int64_t rows = 70, cols = 128;
  std::vector<double> v(size_t(rows * cols));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::cos(double(i)) * 3;
  v[size_t(3 * cols + 1)] = inf, v[size_t(40 * cols + 1)] = -inf;  // column 1: NaN
  v[size_t(5 * cols + 2)] = -inf;                                  // column 2: -inf
  v[size_t(69 * cols + 100)] = -nan, v[size_t(0 * cols + 101)] = nan;
  for (int64_t r = 0; r < rows; ++r) v[size_t(r * cols + 7)] = -0.0;  // column 7: +0 (a lane starts at +0)
  const Tensor x = from(v, {rows, cols});
  const Tensor dense = contiguous(transpose(x, 0, 1));
  const Tensor s = sum(x, {0});
  for (int64_t c = 0; c < cols; ++c) {
    const float want = ordered_sum(dense.data<float>() + c * rows, rows);
    EXPECT_EQ(std::memcmp(s.data<float>() + c, &want, sizeof want), 0) << "column " << c;
  }
  EXPECT_TRUE(std::isnan(s.data<float>()[1]));
  EXPECT_EQ(s.data<float>()[2], -INFINITY);
}

TEST(Reduce, Mean) {
  Tensor a = iota({2, 3});
  EXPECT_EQ(mean(a).item(), 2.5);
  EXPECT_EQ(values(mean(a, {1})), (std::vector<double>{1, 4}));
  EXPECT_EQ(values(mean(a, {-2}, true)), (std::vector<double>{1.5, 2.5, 3.5}));
  EXPECT_EQ(mean(a, {-2}, true).sizes(), (Shape{1, 3}));
  for (DType dt : {DType::f64, DType::bf16, DType::f16}) {
    Tensor m = mean(iota({4}, dt));
    EXPECT_EQ(m.dtype(), dt);
    EXPECT_EQ(m.item(), 1.5);
  }
  EXPECT_TRUE(std::isnan(mean(Tensor::empty({0})).item()));
}

TEST(Reduce, MeanOfIntsIsAnError) {
  EXPECT_THROW(mean(iota({3}, DType::i64)), Error);
  EXPECT_THROW(mean(iota({3}, DType::i32)), Error);
  EXPECT_THROW(mean(iota({3}, DType::boolean)), Error);
  EXPECT_THROW(mean(iota({3}), {}, false, DType::i64), Error);
  // With a floating dtype it is allowed, as in PyTorch.
  EXPECT_EQ(mean(iota({3}, DType::i64), {}, false, DType::f32).item(), 1.0);
}

TEST(Reduce, AmaxAminEveryDType) {
  for (DType dt : kAll) {
    Tensor a = from({3, 0, 1, 2, 1, 0}, {2, 3}, dt);
    if (dt == DType::boolean) {
      EXPECT_EQ(values(amax(a, {1})), (std::vector<double>{1, 1})) << dtype_name(dt);
      EXPECT_EQ(values(amin(a, {1})), (std::vector<double>{0, 0})) << dtype_name(dt);
      continue;
    }
    EXPECT_EQ(amax(a).dtype(), dt);
    EXPECT_EQ(amax(a).item(), 3.0) << dtype_name(dt);
    EXPECT_EQ(amin(a).item(), 0.0) << dtype_name(dt);
    EXPECT_EQ(values(amax(a, {1})), (std::vector<double>{3, 2})) << dtype_name(dt);
    EXPECT_EQ(values(amin(a, {0})), (std::vector<double>{2, 0, 0})) << dtype_name(dt);
    EXPECT_EQ(amax(a, {-1}, true).sizes(), (Shape{2, 1}));
  }
  Tensor neg = from({-5, -3, -9}, {3});
  EXPECT_EQ(amax(neg).item(), -3.0);
  EXPECT_EQ(amin(neg).item(), -9.0);
}

TEST(Reduce, AmaxPropagatesNaNAndRejectsEmpty) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(std::isnan(amax(from({1, nan, 3}, {3})).item()));
  EXPECT_TRUE(std::isnan(amin(from({nan, 1, 3}, {3})).item()));
  EXPECT_TRUE(std::isnan(amax(from({1, 3, nan}, {3}, DType::bf16)).item()));
  EXPECT_THROW(amax(Tensor::empty({0})), Error);
  EXPECT_THROW(amin(Tensor::empty({2, 0}), {1}), Error);
  EXPECT_EQ(amax(Tensor::empty({0, 3}), {1}).sizes(), (Shape{0}));  // nothing reduced over 0
  EXPECT_EQ(sum(Tensor::empty({0, 3}), {0}).sizes(), (Shape{3}));
  EXPECT_EQ(values(sum(Tensor::empty({0, 3}), {0})), (std::vector<double>{0, 0, 0}));
}

TEST(Reduce, ZeroDim) {
  Tensor s = from({4}, {});
  EXPECT_EQ(sum(s).item(), 4.0);
  EXPECT_EQ(sum(s, {0}).item(), 4.0);
  EXPECT_EQ(amax(s, {-1}).item(), 4.0);
  EXPECT_THROW(sum(s, {1}), Error);
}

TEST(Reduce, MetaGivesMeta) {
  Tensor m = Tensor::meta({2, 3, 4}, DType::bf16);
  EXPECT_TRUE(sum(m, {1}).is_meta());
  EXPECT_EQ(sum(m, {1}).sizes(), (Shape{2, 4}));
  EXPECT_EQ(sum(m, {1}).dtype(), DType::bf16);
  EXPECT_EQ(sum(Tensor::meta({3}, DType::i32)).dtype(), DType::i64);
  EXPECT_EQ(mean(m, {0, 2}, true).sizes(), (Shape{1, 3, 1}));
  EXPECT_TRUE(mean(m).is_meta());
  EXPECT_EQ(amax(m, {-1}).sizes(), (Shape{2, 3}));
  EXPECT_TRUE(amin(m).is_meta());
  EXPECT_EQ(amin(m).sizes(), Shape{});
  EXPECT_THROW(sum(m, {5}), Error);
  EXPECT_THROW(mean(Tensor::meta({3}, DType::i64)), Error);
  EXPECT_THROW(amax(Tensor::meta({0}, DType::f32)), Error);
  EXPECT_EQ(reduced_shape("sum", {2, 3, 4}, {-1}, true), (Shape{2, 3, 1}));
}

TEST(Reduce, MaxMinDimValuesAndFirstIndex) {
  using V = std::vector<double>;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (DType dt : kAll) {
    SCOPED_TRACE(std::string(dtype_name(dt)));
    Tensor a = from({3, 0, 3, 1, 2, 2}, {2, 3}, dt);  // bool: 1 0 1 / 1 1 1
    ValuesIndices mx = max_dim(a, 1);
    EXPECT_EQ(mx.values.dtype(), dt);
    EXPECT_EQ(mx.indices.dtype(), DType::i64);
    if (dt == DType::boolean) {
      EXPECT_EQ(values(mx.indices), V({0, 0}));
      EXPECT_EQ(values(min_dim(a, 1).indices), V({1, 0}));
      continue;
    }
    EXPECT_EQ(values(mx.values), V({3, 2}));
    EXPECT_EQ(values(mx.indices), V({0, 1}));  // ties: the first
    ValuesIndices mn = min_dim(a, 0, true);
    EXPECT_EQ(mn.values.sizes(), (Shape{1, 3}));
    EXPECT_EQ(values(mn.values), V({1, 0, 2}));
    EXPECT_EQ(values(mn.indices), V({1, 0, 1}));
  }
  // NaN wins at its first index; signed zeros tie; strided input.
  Tensor n = from({1, nan, 5, nan}, {4});
  EXPECT_TRUE(std::isnan(max_dim(n, 0).values.item()));
  EXPECT_EQ(max_dim(n, 0).indices.item(), 1);
  EXPECT_EQ(min_dim(n, -1).indices.item(), 1);
  EXPECT_TRUE(std::signbit(min_dim(from({-0.0, 0.0}, {2}), 0).values.item()));
  Tensor t = transpose(from({1, 9, 4, 2, 8, 7}, {2, 3}), 0, 1);  // [[1, 2], [9, 8], [4, 7]]
  EXPECT_EQ(values(max_dim(t, 1).indices), V({1, 0, 1}));
  // 0-dim: itself, index 0; an empty reduced dim is an error, an empty kept one is not.
  EXPECT_EQ(max_dim(from({4}, {}), -1).indices.item(), 0);
  EXPECT_THROW(max_dim(Tensor::empty({0, 3}), 0), Error);
  EXPECT_EQ(min_dim(Tensor::empty({0, 3}), 1).indices.sizes(), (Shape{0}));
  EXPECT_THROW(max_dim(Tensor::empty({2, 3}), 2), Error);
  ValuesIndices m = max_dim(Tensor::meta({2, 5}, DType::f16), 1, true);
  EXPECT_TRUE(m.values.is_meta() && m.indices.is_meta());
  EXPECT_EQ(m.indices.sizes(), (Shape{2, 1}));
}

TEST(Reduce, ArgmaxArgmin) {
  using V = std::vector<double>;
  Tensor a = from({3, 7, 7, 1, -2, 5}, {2, 3}, DType::i32);
  EXPECT_EQ(argmax(a).item(), 1);  // flattened, first of the ties
  EXPECT_EQ(argmin(a).item(), 4);
  EXPECT_EQ(argmax(a, std::nullopt, true).sizes(), (Shape{1, 1}));
  EXPECT_EQ(values(argmax(a, -1)), V({1, 2}));
  EXPECT_EQ(values(argmin(a, 0, true)), V({1, 1, 1}));
  EXPECT_EQ(argmax(from({2}, {})).item(), 0);
  EXPECT_THROW(argmax(from({1, 0}, {2}, DType::boolean)), Error);
  EXPECT_THROW(argmax(Tensor::empty({0})), Error);
  EXPECT_THROW(argmin(Tensor::empty({2, 0}), 1), Error);
  EXPECT_EQ(argmax(Tensor::meta({3, 4}, DType::bf16), 0).dtype(), DType::i64);
}

// The ordered rule, spelled out: the first index of the extreme, a NaN winning
// at its first index.
int64_t ordered_arg_extreme(const std::vector<double>& row, bool is_max) {
  int64_t at = 0;
  for (size_t i = 1; i < row.size(); ++i) {
    if (std::isnan(row[size_t(at)])) break;
    if (std::isnan(row[i]) || (is_max ? row[i] > row[size_t(at)] : row[i] < row[size_t(at)])) at = int64_t(i);
  }
  return at;
}

// Rows long enough for the vectorized loops (lanes, two chains and a tail), with
// ties placed so that a later lane holds the earlier index, NaNs, signed zeros
// and infinities; over dim 1 (rows) and, transposed, over dim 0 (columns).
TEST(Reduce, ArgmaxArgminFirstIndexAndNaNInVectorizedLoops) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const int64_t rows = 9, cols = 100;
  std::vector<std::vector<double>> r(rows);
  for (int64_t i = 0; i < rows; ++i) {
    r[size_t(i)].resize(size_t(cols));
    for (int64_t j = 0; j < cols; ++j) r[size_t(i)][size_t(j)] = std::sin(double(i * cols + j));  // in (-1, 1)
  }
  r[0][40] = r[0][9] = 5, r[0][70] = -5, r[0][25] = -5;  // ties in other lanes and chains
  r[1][50] = nan, r[1][70] = nan;                        // the first NaN, for max and min
  for (double& v : r[2]) v = -std::fabs(v) - 1;          // max is a zero: -0.0 first, then 0.0
  r[2][20] = -0.0, r[2][33] = 0.0;
  r[3][30] = inf, r[3][31] = -inf, r[3][95] = inf, r[3][96] = -inf;
  r[4][99] = 7, r[4][98] = -7;                           // in the tail
  r[5][0] = 7, r[5][64] = 7;                             // the first element, tied in a later block
  r[6][97] = nan;                                        // a NaN in the tail only
  r[7][3] = 2, r[7][19] = 2, r[7][35] = 2;               // the same lane of both chains
  std::vector<double> flat;
  for (const auto& row : r) flat.insert(flat.end(), row.begin(), row.end());
  for (DType dt : {DType::f32, DType::f64, DType::bf16}) {
    SCOPED_TRACE(std::string(dtype_name(dt)));
    const Tensor x = from(flat, {rows, cols}, dt);
    const Tensor xt = contiguous(transpose(x, 0, 1));  // [cols, rows]: the columns path
    const std::vector<double> all = values(x);
    for (bool is_max : {true, false}) {
      const Tensor by_row = is_max ? argmax(x, 1) : argmin(x, 1), by_col = is_max ? argmax(xt, 0) : argmin(xt, 0);
      const ValuesIndices vi = is_max ? max_dim(x, 1) : min_dim(x, 1);
      for (int64_t i = 0; i < rows; ++i) {
        const std::vector<double> row(all.begin() + i * cols, all.begin() + (i + 1) * cols);
        const int64_t want = ordered_arg_extreme(row, is_max);
        EXPECT_EQ(by_row.data<int64_t>()[i], want) << "row " << i << (is_max ? " max" : " min");
        EXPECT_EQ(by_col.data<int64_t>()[i], want) << "column " << i << (is_max ? " max" : " min");
        EXPECT_EQ(vi.indices.data<int64_t>()[i], want) << "row " << i;
        const double got = values(vi.values)[size_t(i)];
        EXPECT_TRUE(std::isnan(row[size_t(want)]) ? std::isnan(got)
                                                   : std::memcmp(&got, &row[size_t(want)], sizeof got) == 0)
            << "row " << i << " value " << got;
      }
    }
    EXPECT_EQ(argmax(x, 1).data<int64_t>()[2], 20);  // -0.0 == 0.0: the first zero
    EXPECT_TRUE(std::signbit(values(max_dim(x, 1).values)[2]));
  }
}

TEST(Reduce, VarStdCorrection) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor a = from({1, 2, 4, 2, 2, 2}, {2, 3});
  EXPECT_NEAR(var(a).item(), 29.0 / 30, 1e-6);  // mean 13/6, unbiased: (29/6) / 5
  Tensor r = var(a, {1});
  EXPECT_NEAR(values(r)[0], 7.0 / 3, 1e-6);
  EXPECT_EQ(values(r)[1], 0);
  EXPECT_NEAR(values(var(a, {1}, 0))[0], 14.0 / 9, 1e-6);
  EXPECT_NEAR(values(std_dev(a, {-1}, 1, true))[0], std::sqrt(7.0 / 3), 1e-6);
  EXPECT_EQ(std_dev(a, {-1}, 1, true).sizes(), (Shape{2, 1}));
  auto [v, m] = var_mean(a, {1});
  EXPECT_NEAR(values(m)[0], 7.0 / 3, 1e-6);
  EXPECT_EQ(values(v), values(var(a, {1})));
  EXPECT_EQ(values(std_mean(a, {1}).first), values(std_dev(a, {1})));
  // N - correction <= 0: inf, or NaN with no deviation; empty: NaN.
  EXPECT_EQ(var(from({1, 2}, {2}), {}, 5).item(), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(var(from({1}, {1})).item()));
  EXPECT_TRUE(std::isnan(var(Tensor::empty({0})).item()));
  EXPECT_TRUE(std::isnan(var(from({1, nan}, {2})).item()));
  // Reduced floats keep their dtype; integers are refused, meta too.
  EXPECT_EQ(var(from({1, 2, 4}, {3}, DType::bf16)).dtype(), DType::bf16);
  EXPECT_THROW(var(from({1, 2}, {2}, DType::i64)), Error);
  EXPECT_THROW(std_dev(Tensor::meta({2}, DType::boolean)), Error);
  EXPECT_THROW(var(a, {1, 1}), Error);
  EXPECT_EQ(var(Tensor::meta({2, 3}, DType::f16), {0}).sizes(), (Shape{3}));
}

TEST(Reduce, Cumsum) {
  using V = std::vector<double>;
  Tensor a = from({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(values(cumsum(a, 1)), V({1, 3, 6, 4, 9, 15}));
  EXPECT_EQ(values(cumsum(a, 0)), V({1, 2, 3, 5, 7, 9}));
  EXPECT_EQ(values(cumsum(transpose(a, 0, 1), -1)), V({1, 5, 2, 7, 3, 9}));
  Tensor i = cumsum(from({1, 1, 0}, {3}, DType::boolean), 0);  // integers and bool become i64
  EXPECT_EQ(i.dtype(), DType::i64);
  EXPECT_EQ(values(i), V({1, 2, 2}));
  EXPECT_EQ(cumsum(from({1, 2}, {2}, DType::i32), 0, DType::f32).dtype(), DType::f32);
  EXPECT_EQ(cumsum(from({3}, {}), 0).item(), 3);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor n = cumsum(from({1, nan, 2}, {3}), 0);
  EXPECT_TRUE(std::isnan(values(n)[2]));
  EXPECT_THROW(cumsum(a, 2), Error);
  EXPECT_EQ(cumsum(Tensor::meta({2, 3}, DType::i32), 1).dtype(), DType::i64);
}

TEST(Reduce, VectorNorm) {
  using V = std::vector<double>;
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  Tensor a = from({3, -4, 0, 1, 2, -2}, {2, 3});
  EXPECT_EQ(values(norm(a, std::nullopt, {1})), V({5, 3}));
  EXPECT_EQ(values(norm(a, 1.0, {0}, true)), V({4, 6, 2}));
  EXPECT_EQ(values(norm(a, inf, {1})), V({4, 2}));
  EXPECT_EQ(values(norm(a, -inf, {1})), V({0, 1}));
  EXPECT_EQ(values(norm(a, 0.0, {1})), V({2, 3}));
  EXPECT_NEAR(norm(a, 3.0).item(), std::cbrt(27.0 + 64 + 1 + 8 + 8), 1e-5);
  EXPECT_EQ(norm(a, 2.0).sizes(), Shape{});  // dims empty: all
  EXPECT_TRUE(std::isnan(norm(from({1, nan}, {2}), inf).item()));
  EXPECT_EQ(norm(from({3e38, 1}, {2}), 2.0).item(), inf);  // squares in float, as PyTorch
  EXPECT_EQ(norm(from({3e38, 1}, {2}, DType::f64), 2.0).item(), 3e38);
  EXPECT_EQ(norm(Tensor::empty({0}), 2.0).item(), 0);
  EXPECT_THROW(norm(Tensor::empty({2, 0}), inf, {1}), Error);
  EXPECT_THROW(norm(from({1, 2}, {2}, DType::i64), 2.0), Error);
  EXPECT_EQ(norm(Tensor::meta({2, 3}, DType::bf16), 2.0, {-1}, true).sizes(), (Shape{2, 1}));
}

TEST(Reduce, AnyAll) {
  using V = std::vector<double>;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor a = from({0, 0, -0.0, 1, nan, 2}, {2, 3});
  EXPECT_EQ(any(a).dtype(), DType::boolean);
  EXPECT_EQ(any(a).item(), 1);
  EXPECT_EQ(all(a).item(), 0);
  EXPECT_EQ(values(any(a, {1})), V({0, 1}));
  EXPECT_EQ(values(all(a, {1}, true)), V({0, 1}));  // NaN counts as nonzero
  EXPECT_EQ(values(all(from({1, 0, 1, 1}, {2, 2}, DType::boolean), {0})), V({1, 0}));
  EXPECT_EQ(any(Tensor::empty({0})).item(), 0);
  EXPECT_EQ(all(Tensor::empty({0})).item(), 1);
  EXPECT_EQ(any(Tensor::meta({2, 3}, DType::i32), {0}).dtype(), DType::boolean);
  EXPECT_THROW(all(a, {2}), Error);
}

TEST(Reduce, Topk) {
  using V = std::vector<double>;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor a = from({3, 9, 1, 9, 4, 0}, {2, 3});
  ValuesIndices r = topk(a, 2);
  EXPECT_EQ(r.values.sizes(), (Shape{2, 2}));
  EXPECT_EQ(values(r.values), V({9, 3, 9, 4}));
  EXPECT_EQ(values(r.indices), V({1, 0, 0, 1}));
  ValuesIndices s = topk(a, 1, 0, false);  // smallest along dim 0
  EXPECT_EQ(values(s.values), V({3, 4, 0}));
  EXPECT_EQ(values(s.indices), V({0, 1, 1}));
  EXPECT_EQ(values(topk(from({2, 2, 1}, {3}), 2).indices), V({0, 1}));  // ties: index order
  ValuesIndices n = topk(from({1, nan, 3}, {3}), 2);
  EXPECT_TRUE(std::isnan(values(n.values)[0]));
  EXPECT_EQ(values(n.indices), V({1, 2}));
  EXPECT_EQ(values(topk(from({1, nan, 3}, {3}), 1, 0, false).indices), V({0}));
  EXPECT_EQ(topk(a, 0).values.sizes(), (Shape{2, 0}));
  EXPECT_THROW(topk(a, 4), Error);
  EXPECT_THROW(topk(from({1, 0}, {2}, DType::boolean), 1), Error);
  EXPECT_EQ(topk(Tensor::meta({4, 5}, DType::bf16), 3, 0).indices.sizes(), (Shape{3, 5}));
}

}  // namespace
}  // namespace symmflow::kernels
