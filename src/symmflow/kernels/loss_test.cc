#include "symmflow/kernels/loss.h"

#include <gtest/gtest.h>

#include <cmath>

#include "symmflow/kernels/kernel_testing.h"

namespace symmflow::kernels {
namespace {

using testing::from;
using testing::values;
using V = std::vector<double>;

TEST(Loss, NllLossReductionsWeightsAndIgnoredTargets) {
  Tensor x = from({-1, -2, -3, -4, -5, -6}, {2, 3});
  Tensor t = from({2, 0}, {2}, DType::i64);
  auto [mean, total] = nll_loss_forward(x, t, std::nullopt, 1, -100);
  EXPECT_EQ(mean.sizes(), Shape{});
  EXPECT_EQ(mean.item(), 3.5);  // (3 + 4) / 2
  EXPECT_EQ(total.item(), 2);
  EXPECT_EQ(nll_loss_forward(x, t, std::nullopt, 2, -100).first.item(), 7);
  auto [none, zero] = nll_loss_forward(x, t, std::nullopt, 0, -100);
  EXPECT_EQ(values(none), V({3, 4}));
  EXPECT_EQ(zero.item(), 0);
  // Weights scale each loss and the divisor; an ignored target counts 0.
  Tensor w = from({1, 1, 0.5}, {3});
  EXPECT_EQ(nll_loss_forward(x, t, w, 1, -100).first.item(), double(float((1.5 + 4) / 1.5)));  // rounded once
  auto [ig, tw] = nll_loss_forward(x, from({2, -100}, {2}, DType::i64), std::nullopt, 1, -100);
  EXPECT_EQ(ig.item(), 3);
  EXPECT_EQ(tw.item(), 1);
  EXPECT_TRUE(std::isnan(nll_loss_forward(x, from({1, 1}, {2}, DType::i64), std::nullopt, 1, 1).first.item()));
  // A [C] input with a 0-dim target: its loss and weight, also with reduction none.
  auto [one, w1] = nll_loss_forward(from({-1, -2}, {2}), from({1}, {}, DType::i64), std::nullopt, 0, -100);
  EXPECT_EQ(one.item(), 2);
  EXPECT_EQ(w1.item(), 1);
  EXPECT_EQ(nll_loss_forward(from({-1, -2}, {1, 2}, DType::bf16), from({0}, {1}, DType::i64), std::nullopt, 1, -100)
                .first.dtype(), DType::bf16);
  EXPECT_THROW(nll_loss_forward(x, from({3, 0}, {2}, DType::i64), std::nullopt, 1, -100), Error);
  EXPECT_THROW(nll_loss_forward(x, from({0, 0}, {2}, DType::i32), std::nullopt, 1, -100), Error);
  EXPECT_THROW(nll_loss_forward(x, from({0}, {1}, DType::i64), std::nullopt, 1, -100), Error);
  EXPECT_THROW(nll_loss_forward(x, t, from({1, 1}, {2}), 1, -100), Error);
  EXPECT_THROW(nll_loss_forward(x, t, std::nullopt, 3, -100), Error);
  EXPECT_THROW(nll_loss_forward(from({1}, {1, 1, 1}), from({0}, {1}, DType::i64), std::nullopt, 1, -100), Error);
  auto meta = nll_loss_forward(Tensor::meta({4, 3}, DType::f32), Tensor::meta({4}, DType::i64), std::nullopt, 0, -100);
  EXPECT_TRUE(meta.first.is_meta());
  EXPECT_EQ(meta.first.sizes(), Shape{4});
}

TEST(Loss, MseLoss) {
  Tensor a = from({1, 2, 4}, {3}), b = from({0, 2, 1}, {3});
  EXPECT_EQ(values(mse_loss(a, b, 0)), V({1, 0, 9}));
  EXPECT_EQ(mse_loss(a, b).item(), double(10.0f / 3.0f));
  EXPECT_EQ(mse_loss(a, b, 2).item(), 10);
  EXPECT_EQ(mse_loss(from({1, 2}, {2, 1}), from({1, 2}, {2}), 0).sizes(), (Shape{2, 2}));  // broadcast
  EXPECT_EQ(mse_loss(a, from({0, 0, 0}, {3}, DType::f64)).dtype(), DType::f64);
  EXPECT_THROW(mse_loss(from({1}, {1}, DType::i64), from({1}, {1}, DType::i64)), Error);
  EXPECT_THROW(mse_loss(a, b, 3), Error);
  EXPECT_TRUE(mse_loss(Tensor::meta({2}, DType::f16), Tensor::meta({2}, DType::f16)).is_meta());
}

}  // namespace
}  // namespace symmflow::kernels
