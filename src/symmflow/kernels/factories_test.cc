#include "symmflow/kernels/factories.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>

#include "symmflow/kernels/copy.h"
#include "symmflow/kernels/kernel_testing.h"

namespace symmflow::kernels {
namespace {

using testing::values;

const DType kAll[] = {DType::f32, DType::f64, DType::bf16, DType::f16,
                      DType::i32, DType::i64, DType::boolean};

TEST(Factories, EmptyZerosOnesFullEveryDType) {
  for (DType dt : kAll) {
    Tensor e = empty({2, 3}, dt);
    EXPECT_EQ(e.dtype(), dt);
    EXPECT_EQ(e.sizes(), (Shape{2, 3}));
    EXPECT_TRUE(e.is_contiguous());
    EXPECT_EQ(values(zeros({2, 3}, dt)), std::vector<double>(6, 0.0)) << dtype_name(dt);
    EXPECT_EQ(values(ones({4}, dt)), std::vector<double>(4, 1.0)) << dtype_name(dt);
    double v = dt == DType::boolean ? 1.0 : 7.0;
    EXPECT_EQ(values(full({3}, Scalar(int64_t(7)), dt)), std::vector<double>(3, v)) << dtype_name(dt);
  }
  EXPECT_EQ(zeros({}).dim(), 0);
  EXPECT_EQ(zeros({}).item(), 0.0);
  EXPECT_EQ(zeros({0, 5}).numel(), 0);
  EXPECT_THROW(zeros({-1}), Error);
}

TEST(Factories, FullInfersDTypeFromValue) {
  EXPECT_EQ(full({2}, Scalar(int64_t(3))).dtype(), DType::i64);
  EXPECT_EQ(full({2}, Scalar(2.5)).dtype(), DType::f32);
  EXPECT_EQ(full({2}, Scalar(true)).dtype(), DType::boolean);
  EXPECT_EQ(values(full({2}, Scalar(2.5))), (std::vector<double>{2.5, 2.5}));
  EXPECT_EQ(values(full({2}, Scalar(2.5), DType::i32)), (std::vector<double>{2, 2}));
  EXPECT_EQ(values(full({1}, Scalar(1.00390625), DType::bf16)), (std::vector<double>{1.0}));  // ties to even
}

TEST(Factories, ArangeLengthsAndDTypes) {
  Tensor a = arange(5);
  EXPECT_EQ(a.dtype(), DType::i64);
  EXPECT_EQ(values(a), (std::vector<double>{0, 1, 2, 3, 4}));
  EXPECT_EQ(values(arange(0, 10, 3)), (std::vector<double>{0, 3, 6, 9}));
  EXPECT_EQ(values(arange(1, 10, 3)), (std::vector<double>{1, 4, 7}));
  EXPECT_EQ(values(arange(10, 0, -3)), (std::vector<double>{10, 7, 4, 1}));
  EXPECT_EQ(values(arange(-3, 2)), (std::vector<double>{-3, -2, -1, 0, 1}));
  EXPECT_EQ(arange(3, 3).numel(), 0);
  Tensor f = arange(Scalar(0.0), Scalar(1.0), Scalar(0.25));
  EXPECT_EQ(f.dtype(), DType::f32);
  EXPECT_EQ(values(f), (std::vector<double>{0, 0.25, 0.5, 0.75}));
  EXPECT_EQ(arange(Scalar(2.5)).dtype(), DType::f32);
  EXPECT_EQ(values(arange(Scalar(2.5))), (std::vector<double>{0, 1, 2}));  // ceil(2.5) = 3
  EXPECT_EQ(arange(Scalar(0), Scalar(1), Scalar(0.3)).numel(), 4);          // ceil(3.33) = 4
  EXPECT_EQ(arange(Scalar(1.0), Scalar(2.0), Scalar(0.5)).numel(), 2);
  EXPECT_EQ(arange(0, 10, 5, DType::f64).dtype(), DType::f64);
  EXPECT_EQ(values(arange(4, DType::bf16)), (std::vector<double>{0, 1, 2, 3}));
  EXPECT_EQ(arange(5, DType::i32).dtype(), DType::i32);
  EXPECT_THROW(arange(0, 10, 0), Error);
  EXPECT_THROW(arange(0, 10, -1), Error);
  EXPECT_THROW(arange(10, 0), Error);
  EXPECT_THROW(arange(Scalar(0.0), Scalar(std::nan(""))), Error);
}

// full checks its value as fill_ does (PyTorch's checked conversion), on meta too.
TEST(Factories, FullValueMustFitTheDType) {
  const double nan = std::nan("");
  auto error_of = [](auto&& fn) -> std::string {
    try {
      fn();
    } catch (const Error& e) {
      return e.what();
    }
    return "<no error>";
  };
  for (bool meta : {false, true}) {
    EXPECT_NE(error_of([&] { full({2}, Scalar(nan), DType::i64, meta); })
                  .find("full: value cannot be converted to type int64_t without overflow"),
              std::string::npos);
    EXPECT_NE(error_of([&] { full({2}, Scalar(70000.0), DType::f16, meta); })
                  .find("full: value cannot be converted to type at::Half without overflow"),
              std::string::npos);
    EXPECT_NE(error_of([&] { full({2}, Scalar(int64_t(3000000000)), DType::i32, meta); })
                  .find("full: value cannot be converted to type int without overflow"),
              std::string::npos);
  }
  EXPECT_EQ(values(full({2}, Scalar(int64_t(3000000000)))), (std::vector<double>(2, 3e9)));  // i64
  EXPECT_EQ(values(full({1}, Scalar(65504.0), DType::f16)), (std::vector<double>{65504}));
  EXPECT_TRUE(std::isnan(values(full({1}, Scalar(nan)))[0]));                            // f32
}

// Integer aranges as PyTorch (RangeFactories.cpp): start, end and step are converted
// to int64 first (truncated, checked), so a fractional step can become 0; the length
// of an i64 arange counts in integers, of other integer dtypes from the doubles.
TEST(Factories, ArangeIntegerDTypesTruncateTheirArguments) {
  for (bool meta : {false, true}) {
    for (DType dt : {DType::i64, DType::i32}) {
      EXPECT_THROW(arange(Scalar(0), Scalar(3), Scalar(0.5), dt, meta), Error);
      EXPECT_THROW(arange(Scalar(0), Scalar(3), Scalar(-0.5), dt, meta), Error);
      EXPECT_THROW(arange(Scalar(0), Scalar(std::nan("")), Scalar(1), dt, meta), Error);
      EXPECT_THROW(arange(Scalar(0), Scalar(INFINITY), Scalar(1), dt, meta), Error);
    }
    EXPECT_THROW(arange(Scalar(0), Scalar(2), Scalar(1), DType::boolean, meta), Error);
  }
  auto msg = [](auto&& fn) -> std::string {
    try {
      fn();
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(msg([] { arange(Scalar(0), Scalar(3), Scalar(0.5), DType::i64); }).find("arange: step must be nonzero"),
            std::string::npos);
  EXPECT_NE(msg([] { arange(Scalar(0), Scalar(std::nan("")), Scalar(1), DType::i64); })
                .find("value cannot be converted to type int64_t without overflow"),
            std::string::npos);
  using V = std::vector<double>;
  auto ar = [](double a, double b, double c, DType dt) { return values(arange(Scalar(a), Scalar(b), Scalar(c), dt)); };
  // PyTorch 1.13's results (torch.arange(..., dtype=...)).
  EXPECT_EQ(ar(0, 3, 1.5, DType::i64), V({0, 1, 2}));
  EXPECT_EQ(ar(0, 3, 1.5, DType::i32), V({0, 1}));
  EXPECT_EQ(ar(0, 3.5, 1, DType::i64), V({0, 1, 2}));
  EXPECT_EQ(ar(0, 3.5, 1, DType::i32), V({0, 1, 2, 3}));
  EXPECT_EQ(ar(-0.5, 3, 1, DType::i32), V({0, 1, 2, 3}));
  EXPECT_EQ(ar(0, 3, 2.5, DType::i64), V({0, 2}));
  EXPECT_EQ(ar(0, -3.5, -1, DType::i32), V({0, -1, -2, -3}));
  EXPECT_EQ(ar(0, -3.5, -1, DType::i64), V({0, -1, -2}));
  EXPECT_EQ(values(arange(Scalar(2.5), DType::i32)), V({0, 1, 2}));
  EXPECT_EQ(values(arange(Scalar(0.3), DType::i64)), V({}));
  EXPECT_EQ(arange(Scalar(0), Scalar(3.5), Scalar(1), DType::i32, true).sizes(), Shape({4}));
  // Floating dtypes are unchanged: step 0.5 in f16.
  EXPECT_EQ(ar(0, 3, 0.5, DType::f16), V({0, 0.5, 1, 1.5, 2, 2.5}));
  EXPECT_THROW(arange(Scalar(0), Scalar(1e39), Scalar(1e38), DType::f16), Error);  // float overflow
}

TEST(Factories, RandnIsReproducible) {
  Tensor a = randn({1000}, DType::f32, 42), b = randn({1000}, DType::f32, 42);
  EXPECT_EQ(std::memcmp(a.data_ptr(), b.data_ptr(), a.nbytes()), 0);
  Tensor c = randn({1000}, DType::f32, 43);
  EXPECT_NE(std::memcmp(a.data_ptr(), c.data_ptr(), a.nbytes()), 0);
  // Element i depends only on (seed, i): shape does not matter, a prefix is a prefix.
  Tensor d = randn({10, 100}, DType::f32, 42), e = randn({7}, DType::f32, 42);
  EXPECT_EQ(std::memcmp(a.data_ptr(), d.data_ptr(), a.nbytes()), 0);
  EXPECT_EQ(std::memcmp(a.data_ptr(), e.data_ptr(), e.nbytes()), 0);
  // Every dtype is the f64 value rounded.
  Tensor r64 = randn({50}, DType::f64, 7);
  for (DType dt : {DType::f32, DType::bf16, DType::f16}) {
    auto v = values(randn({50}, dt, 7)), w = values(r64);
    for (int i = 0; i < 50; ++i)
      EXPECT_NEAR(v[i], w[i], std::abs(w[i]) * (dt == DType::f32 ? 1e-7 : 1e-2)) << dtype_name(dt);
  }
  // The documented formula, element 3 of seed 5.
  const uint64_t key = splitmix64(5);
  const double u1 = std::ldexp(double((splitmix64(key + 6) >> 11) + 1), -53);
  const double u2 = std::ldexp(double(splitmix64(key + 7) >> 11), -53);
  EXPECT_EQ(randn({4}, DType::f64, 5).data<double>()[3],
            std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586476925286766559 * u2));
  EXPECT_THROW(randn({2}, DType::i64), Error);
}

TEST(Factories, SplitMix64KnownValues) {
  // Vigna's splitmix64: the first output from state 0 is 0xE220A8397B1DCDAF.
  EXPECT_EQ(splitmix64(0), 0xE220A8397B1DCDAFull);
}

TEST(Factories, RandnMomentsOver1e5Samples) {
  const int64_t n = 100000;
  auto v = values(randn({n}, DType::f64, 1234));
  double m = 0, m2 = 0;
  for (double x : v) m += x;
  m /= n;
  for (double x : v) m2 += (x - m) * (x - m);
  const double sd = std::sqrt(m2 / (n - 1));
  EXPECT_NEAR(m, 0.0, 0.02);  // 1/sqrt(n) = 0.0032
  EXPECT_NEAR(sd, 1.0, 0.02);
  int within1 = 0;
  for (double x : v) within1 += std::abs(x) < 1.0;
  EXPECT_NEAR(double(within1) / n, 0.6827, 0.01);
}

TEST(Factories, RandUniform) {
  for (DType dt : {DType::f32, DType::f64, DType::bf16, DType::f16}) {
    auto v = values(rand({20000}, dt, 9));
    double m = 0;
    for (double x : v) {
      EXPECT_GE(x, 0.0);
      ASSERT_LT(x, 1.0) << dtype_name(dt);
      m += x;
    }
    EXPECT_NEAR(m / v.size(), 0.5, 0.02) << dtype_name(dt);
  }
  Tensor a = rand({100}, DType::f32, 3), b = rand({100}, DType::f32, 3);
  EXPECT_EQ(std::memcmp(a.data_ptr(), b.data_ptr(), a.nbytes()), 0);
  EXPECT_NE(std::memcmp(a.data_ptr(), rand({100}, DType::f32, 4).data_ptr(), a.nbytes()), 0);
  EXPECT_THROW(rand({2}, DType::i32), Error);
}

TEST(Factories, Randint) {
  auto v = values(randint(-3, 4, {5000}, DType::i32, 11));
  std::set<double> seen(v.begin(), v.end());
  EXPECT_EQ(seen, (std::set<double>{-3, -2, -1, 0, 1, 2, 3}));
  EXPECT_EQ(randint(0, 10, {3}).dtype(), DType::i64);
  EXPECT_EQ(values(randint(0, 10, {50}, DType::i64, 1)), values(randint(0, 10, {50}, DType::f32, 1)));
  EXPECT_THROW(randint(5, 5, {2}), Error);
  EXPECT_THROW(randint(0, 2, {2}, DType::boolean), Error);
}

TEST(Factories, MetaFlag) {
  for (const Tensor& t : {empty({2, 3}, DType::f16, true), zeros({2, 3}, DType::f16, true),
                          ones({2, 3}, DType::f16, true), randn({2, 3}, DType::f16, 0, true),
                          rand({2, 3}, DType::f16, 0, true), full({2, 3}, Scalar(1.5), DType::f16, true)}) {
    EXPECT_TRUE(t.is_meta());
    EXPECT_EQ(t.sizes(), (Shape{2, 3}));
    EXPECT_EQ(t.dtype(), DType::f16);
  }
  Tensor a = arange(Scalar(0), Scalar(10), Scalar(3), std::nullopt, true);
  EXPECT_TRUE(a.is_meta());
  EXPECT_EQ(a.sizes(), (Shape{4}));
  EXPECT_EQ(a.dtype(), DType::i64);
  EXPECT_EQ(randint(0, 5, {7}, DType::i32, 0, true).sizes(), (Shape{7}));
  EXPECT_EQ(full({1}, Scalar(true), std::nullopt, true).dtype(), DType::boolean);
  EXPECT_THROW(arange(Scalar(0), Scalar(10), Scalar(0), std::nullopt, true), Error);
  EXPECT_THROW(randn({2}, DType::i64, 0, true), Error);
}

}  // namespace
}  // namespace symmflow::kernels
