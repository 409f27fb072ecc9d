#include "symmflow/kernels/layer_norm.h"

#include <gtest/gtest.h>

#include <cmath>

#include "symmflow/kernels/copy.h"
#include "symmflow/kernels/kernel_testing.h"
#include "symmflow/kernels/views.h"

namespace symmflow::kernels {
namespace {

using testing::from;
using testing::values;
using V = std::vector<double>;

// Row [1, 2, 3, 6]: mean 3, var (4 + 1 + 0 + 9) / 4 = 3.5, rstd 1 / sqrt(3.5 + eps).
TEST(LayerNorm, HandValuesAndStatShapes) {
  Tensor x = from({1, 2, 3, 6, 5, 5, 5, 5}, {2, 1, 4}, DType::f64);
  auto r = native_layer_norm(x, {4}, std::nullopt, std::nullopt, 1e-5);
  EXPECT_EQ(r.mean.sizes(), (Shape{2, 1, 1}));
  EXPECT_EQ(r.rstd.sizes(), (Shape{2, 1, 1}));
  EXPECT_EQ(values(r.mean), V({3, 5}));
  const double rs = 1 / std::sqrt(3.5 + 1e-5);
  EXPECT_DOUBLE_EQ(values(r.rstd)[0], rs);
  EXPECT_DOUBLE_EQ(values(r.rstd)[1], 1 / std::sqrt(1e-5));  // constant row: var 0
  auto y = values(r.out);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(y[i], (V{1, 2, 3, 6}[i] - 3) * rs, 1e-15);
  for (int i = 4; i < 8; ++i) EXPECT_EQ(y[i], 0);
  // Over the last two dims, with weight and bias.
  Tensor w = from({1, 2, 3, 4}, {1, 4}, DType::f64), b = from({0, 0, 0, 10}, {1, 4}, DType::f64);
  auto r2 = native_layer_norm(x, {1, 4}, w, b, 1e-5);
  EXPECT_EQ(r2.mean.sizes(), (Shape{2, 1, 1}));
  EXPECT_NEAR(values(r2.out)[3], 3 * rs * 4 + 10, 1e-14);
  EXPECT_EQ(values(r2.out)[7], 10);
}

// f32 as PyTorch's kernel: float accumulation, y = (x * rstd + (-rstd * mean)) * w + b.
TEST(LayerNorm, FloatFormulaAndReducedDTypes) {
  Tensor x = from({0.1, 0.7, -1.3}, {3});
  auto r = native_layer_norm(x, {3}, std::nullopt, std::nullopt, 1e-5);
  const float m = (0.1f + 0.7f + -1.3f) / 3.0f;
  const float v = ((0.1f - m) * (0.1f - m) + (0.7f - m) * (0.7f - m) + (-1.3f - m) * (-1.3f - m)) / 3.0f;
  const float rs = 1.0f / std::sqrt(v + 1e-5f);
  EXPECT_EQ(values(r.mean)[0], double(m));
  EXPECT_EQ(values(r.rstd)[0], double(rs));
  EXPECT_EQ(values(r.out)[1], double(0.7f * rs + -rs * m));
  for (DType dt : {DType::bf16, DType::f16}) {
    auto h = native_layer_norm(from({0.1, 0.7, -1.3}, {3}, dt), {3}, from({1, 1, 1}, {3}, dt), std::nullopt, 1e-5);
    EXPECT_EQ(h.out.dtype(), dt);
    EXPECT_EQ(h.mean.dtype(), dt);
    EXPECT_NEAR(values(h.out)[1], 0.7 * rs - rs * m, 0.02);
  }
}

TEST(LayerNorm, SpecialRowsAndEmpty) {
  auto r = native_layer_norm(from({1, NAN, 2, 3, 3, 3}, {2, 3}), {3}, std::nullopt, std::nullopt, 1e-5);
  auto y = values(r.out);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(std::isnan(y[i]));
  EXPECT_EQ(y[3], 0);
  // A row holding inf: mean NaN, as PyTorch's Welford pass (not inf).
  auto i = native_layer_norm(from({1, 2, INFINITY}, {3}), {3}, std::nullopt, std::nullopt, 1e-5);
  EXPECT_TRUE(std::isnan(values(i.mean)[0]));
  EXPECT_TRUE(std::isnan(values(i.out)[0]));
  auto e = native_layer_norm(Tensor::empty({2, 0}), {0}, std::nullopt, std::nullopt, 1e-5);
  EXPECT_EQ(values(e.mean), V({0, 0}));  // PyTorch: mean 0, rstd NaN
  EXPECT_TRUE(std::isnan(values(e.rstd)[0]));
  EXPECT_EQ(native_layer_norm(Tensor::empty({0, 4}), {4}, std::nullopt, std::nullopt, 1e-5).mean.sizes(),
            (Shape{0, 1}));
  // A strided input is read through its view.
  Tensor t = transpose(from({1, 5, 2, 5, 3, 5}, {3, 2}), 0, 1);  // rows [1, 2, 3], [5, 5, 5]
  EXPECT_EQ(values(native_layer_norm(t, {3}, std::nullopt, std::nullopt, 0).mean), V({2, 5}));
}

TEST(LayerNorm, ErrorsAndMeta) {
  Tensor x = Tensor::empty({2, 3, 4});
  EXPECT_THROW(native_layer_norm(x, {3}, std::nullopt, std::nullopt, 1e-5), Error);   // not trailing
  EXPECT_THROW(native_layer_norm(x, {}, std::nullopt, std::nullopt, 1e-5), Error);
  EXPECT_THROW(native_layer_norm(x, {4}, Tensor::empty({3}), std::nullopt, 1e-5), Error);
  EXPECT_THROW(native_layer_norm(x, {4}, std::nullopt, Tensor::empty({4}, DType::f64), 1e-5), Error);
  EXPECT_THROW(native_layer_norm(Tensor::empty({2, 4}, DType::i64), {4}, std::nullopt, std::nullopt, 1e-5), Error);
  auto m = native_layer_norm(Tensor::meta({2, 3, 4}, DType::bf16), {3, 4}, std::nullopt, std::nullopt, 1e-5);
  EXPECT_TRUE(m.out.is_meta() && m.mean.is_meta() && m.rstd.is_meta());
  EXPECT_EQ(m.rstd.sizes(), (Shape{2, 1, 1}));
  EXPECT_EQ(m.rstd.dtype(), DType::bf16);
  EXPECT_THROW(native_layer_norm(Tensor::meta({2, 3}, DType::f32), {4}, std::nullopt, std::nullopt, 1e-5), Error);
}

}  // namespace
}  // namespace symmflow::kernels
