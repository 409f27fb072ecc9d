#include "symmflow/kernels/sum_order.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace symmflow::kernels {
namespace {

// sum_order.h's order, spelled out element by element.
float documented_sum(const std::vector<float>& x) {
  float l0[16] = {}, l1[16] = {}, l2[16] = {};
  for (size_t k = 0; k < x.size(); ++k) {
    l0[k % 16] += x[k];
    if ((k + 1) % 2048 == 0) {
      for (int j = 0; j < 16; ++j) l1[j] += l0[j], l0[j] = 0;
      if ((k + 1) % (2048 * 128) == 0)
        for (int j = 0; j < 16; ++j) l2[j] += l1[j], l1[j] = 0;
    }
  }
  float lane[16];
  for (int j = 0; j < 16; ++j) lane[j] = (l2[j] + l1[j]) + l0[j];
  for (int w = 8; w >= 1; w /= 2)
    for (int j = 0; j < w; ++j) lane[j] = lane[2 * j] + lane[2 * j + 1];
  return lane[0];
}

std::vector<float> wild(size_t n) {  // magnitudes from 1e-3 to 1e5: order matters
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = float(std::sin(double(i) * 0.7) * std::pow(10.0, double(i % 9) - 3));
  return x;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(SumOrder, IsTheDocumentedLanesAndCascade) {
  for (size_t n : {0, 1, 15, 17, 2047, 2048, 2049, 5000, 2048 * 128 + 33}) {
    const std::vector<float> x = wild(n);
    EXPECT_TRUE(same_bits(ordered_sum(x.data(), int64_t(n)), documented_sum(x))) << n;
  }
}

// The sequence may arrive in pieces of any size (a gathered reduction does).
TEST(SumOrder, PiecesGiveTheSameBitsAsOneCall) {
  const std::vector<float> x = wild(9000);
  const float whole = ordered_sum(x.data(), int64_t(x.size()));
  for (int64_t piece : {1, 7, 100, 2048, 3000}) {
    LaneSum<float> s;
    for (int64_t i = 0; i < int64_t(x.size()); i += piece)
      s.add(x.data() + i, std::min<int64_t>(piece, int64_t(x.size()) - i));
    EXPECT_TRUE(same_bits(s.value(), whole)) << piece;
  }
}

TEST(SumOrder, KeepsFloatErrorSmall) {
  std::vector<float> ones(size_t(1) << 25, 1.0f);  // a running float sum stops at 2^24
  EXPECT_EQ(ordered_sum(ones.data(), int64_t(ones.size())), float(1 << 25));
  std::vector<double> tenth(1000000, 0.1);
  EXPECT_NEAR(ordered_sum(tenth.data(), int64_t(tenth.size())), 100000.0, 1e-6);
}

}  // namespace
}  // namespace symmflow::kernels
