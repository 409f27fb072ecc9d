#include "symmflow/kernels/softmax.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "symmflow/kernels/copy.h"
#include "symmflow/kernels/reduce.h"
#include "symmflow/kernels/views.h"
#include "symmflow/kernels/kernel_testing.h"

namespace symmflow::kernels {
namespace {

using testing::from;
using testing::values;

TEST(Softmax, HandValues) {
  // softmax([1, 2, 3]) = e^{x-3} / sum = [0.09003057, 0.24472847, 0.66524096]
  Tensor x = from({1, 2, 3, 0, 0, 0}, {2, 3}, DType::f64);
  auto v = values(softmax(x, 1));
  const double want[] = {0.09003057317038046, 0.24472847105479764, 0.6652409557748219,
                         1.0 / 3, 1.0 / 3, 1.0 / 3};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(v[i], want[i], 1e-15) << i;
  auto l = values(log_softmax(x, -1));
  // log_softmax([1, 2, 3]) = x - 3 - log(1 + e^-1 + e^-2) = x - 3.40760596444438
  const double lwant[] = {-2.40760596444438, -1.40760596444438, -0.40760596444438,
                          -std::log(3.0), -std::log(3.0), -std::log(3.0)};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(l[i], lwant[i], 1e-13) << i;
}

TEST(Softmax, RowsSumToOneEveryFloatingDType) {
  for (DType dt : {DType::f32, DType::f64, DType::bf16, DType::f16}) {
    std::vector<double> v(4 * 7);
    for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(double(i)) * 4;
    Tensor x = from(v, {4, 7}, dt);
    Tensor p = softmax(x, -1);
    EXPECT_EQ(p.dtype(), dt);
    EXPECT_EQ(p.sizes(), (Shape{4, 7}));
    const double tol = dt == DType::f64 ? 1e-14 : dt == DType::f32 ? 1e-6 : 2e-2;
    for (double s : values(sum(p, {1}, false, DType::f64))) EXPECT_NEAR(s, 1.0, tol) << dtype_name(dt);
    // exp(log_softmax) == softmax
    auto lp = values(log_softmax(x, 1)), pv = values(p);
    for (size_t i = 0; i < pv.size(); ++i) EXPECT_NEAR(std::exp(lp[i]), pv[i], tol * 2);
  }
}

TEST(Softmax, AlongDimZeroAndNonContiguous) {
  Tensor x = from({1, 2, 3, 1, 2, 3}, {3, 2}, DType::f64);  // columns [1,3,2] and [2,1,3]
  auto v = values(softmax(x, 0));
  EXPECT_NEAR(v[0], 0.09003057317038046, 1e-15);
  EXPECT_NEAR(v[2], 0.6652409557748219, 1e-15);
  EXPECT_NEAR(v[4], 0.24472847105479764, 1e-15);
  EXPECT_NEAR(v[1], 0.24472847105479764, 1e-15);
  // The transpose's rows are x's columns.
  auto t = values(softmax(transpose(x, 0, 1), 1));
  EXPECT_NEAR(t[0], v[0], 1e-15);
  EXPECT_NEAR(t[1], v[2], 1e-15);
  EXPECT_NEAR(t[5], v[5], 1e-15);
}

TEST(Softmax, StableForLargeInputs) {
  Tensor x = from({1000, 1001, 1002}, {3});
  auto v = values(softmax(x, 0));
  EXPECT_NEAR(v[2], 0.6652409557748219, 1e-6);
  auto l = values(log_softmax(from({-1000, 0}, {2}), 0));
  EXPECT_NEAR(l[0], -1000.0, 1e-3);
  EXPECT_EQ(l[1], 0.0);
}

TEST(Softmax, DTypeArgument) {
  Tensor x = from({1, 2, 3}, {3}, DType::bf16);
  Tensor p = softmax(x, 0, DType::f32);
  EXPECT_EQ(p.dtype(), DType::f32);
  EXPECT_NEAR(values(p)[2], 0.6652409557748219, 1e-6);
  Tensor i = from({1, 2, 3}, {3}, DType::i64);
  EXPECT_THROW(softmax(i, 0), Error);
  EXPECT_NEAR(values(log_softmax(i, 0, DType::f64))[0], -2.40760596444438, 1e-13);
  EXPECT_THROW(softmax(x, 0, DType::i32), Error);
  EXPECT_THROW(softmax(x, 1), Error);
}

TEST(Softmax, ZeroDimAndEmpty) {
  EXPECT_EQ(softmax(from({5}, {}), 0).item(), 1.0);
  EXPECT_EQ(log_softmax(from({5}, {}), -1).item(), 0.0);
  EXPECT_EQ(softmax(Tensor::empty({2, 0}), 1).sizes(), (Shape{2, 0}));
}

TEST(Softmax, MetaGivesMeta) {
  Tensor m = Tensor::meta({2, 5}, DType::f16);
  Tensor p = softmax(m, -1);
  EXPECT_TRUE(p.is_meta());
  EXPECT_EQ(p.sizes(), (Shape{2, 5}));
  EXPECT_EQ(p.dtype(), DType::f16);
  EXPECT_EQ(log_softmax(m, 0, DType::f32).dtype(), DType::f32);
  EXPECT_TRUE(log_softmax(m, 0).is_meta());
  EXPECT_THROW(softmax(m, 2), Error);
  EXPECT_THROW(softmax(Tensor::meta({2}, DType::i32), 0), Error);
}

TEST(Softmax, Logsumexp) {
  const double inf = std::numeric_limits<double>::infinity();
  Tensor x = from({0, std::log(3.0), 1000, 1000}, {2, 2});
  std::vector<double> r = values(logsumexp(x, {1}));
  EXPECT_NEAR(r[0], std::log(4.0), 1e-6);
  EXPECT_NEAR(r[1], 1000 + std::log(2.0), 1e-3);  // shifted by the max: no overflow
  EXPECT_EQ(logsumexp(x, {1}, true).sizes(), (Shape{2, 1}));
  // Infinite maxima are not subtracted: inf stays inf, an all -inf row is -inf.
  std::vector<double> s = values(logsumexp(from({inf, 1, -inf, -inf}, {2, 2}), {1}));
  EXPECT_EQ(s[0], inf);
  EXPECT_EQ(s[1], -inf);
  EXPECT_EQ(logsumexp(from({1, 2}, {2}, DType::i64), {0}).dtype(), DType::f32);
  EXPECT_EQ(values(logsumexp(Tensor::empty({0, 2}), {0})), std::vector<double>({-inf, -inf}));
  EXPECT_THROW(logsumexp(x, {}), Error);  // as PyTorch 1.13
  EXPECT_EQ(logsumexp(x, {}, true).sizes(), (Shape{1, 1}));
  EXPECT_TRUE(logsumexp(Tensor::meta({2, 3}, DType::bf16), {0}).is_meta());
}

}  // namespace
}  // namespace symmflow::kernels
