#include "symmflow/kernels/sum_order.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace symmflow::kernels {
namespace {

// sum_order.h's order, spelled out element by element.
float documented_sum(const std::vector<float>& x) {
  float l0[32] = {}, l1[32] = {}, l2[32] = {};
  for (size_t k = 0; k < x.size(); ++k) {
    l0[k % 32] += x[k];
    if ((k + 1) % 4096 == 0) {
      for (int j = 0; j < 32; ++j) l1[j] += l0[j], l0[j] = 0;
      if ((k + 1) % (4096 * 128) == 0)
        for (int j = 0; j < 32; ++j) l2[j] += l1[j], l1[j] = 0;
    }
  }
  float lane[32];
  for (int j = 0; j < 32; ++j) lane[j] = (l2[j] + l1[j]) + l0[j];
  for (int w = 16; w >= 4; w /= 2)
    for (int j = 0; j < w; ++j) lane[j] = lane[j] + lane[j + w];
  return ((lane[0] + lane[1]) + lane[2]) + lane[3];
}

std::vector<float> wild(size_t n) {  // magnitudes from 1e-3 to 1e5: order matters
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = float(std::sin(double(i) * 0.7) * std::pow(10.0, double(i % 9) - 3));
  return x;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(SumOrder, IsTheDocumentedLanesAndCascade) {
  for (size_t n : {0, 1, 15, 17, 31, 33, 4095, 4096, 4097, 9000, 4096 * 128 + 33}) {
    const std::vector<float> x = wild(n);
    EXPECT_TRUE(same_bits(ordered_sum(x.data(), int64_t(n)), documented_sum(x))) << n;
  }
}

// The sequence may arrive in pieces of any size (a gathered reduction does).
TEST(SumOrder, PiecesGiveTheSameBitsAsOneCall) {
  const std::vector<float> x = wild(9000);
  const float whole = ordered_sum(x.data(), int64_t(x.size()));
  for (int64_t piece : {1, 7, 100, 4096, 5000}) {
    LaneSum<float> s;
    for (int64_t i = 0; i < int64_t(x.size()); i += piece)
      s.add(x.data() + i, std::min<int64_t>(piece, int64_t(x.size()) - i));
    EXPECT_TRUE(same_bits(s.value(), whole)) << piece;
  }
}

// A short row (one block at most) takes the path without the cascade: the same bits
// as the cascade, -0.0 and NaN included.
TEST(SumOrder, ShortRowsGiveTheCascadesBits) {
  for (std::vector<float> x : {std::vector<float>{-0.0f}, std::vector<float>(40, -0.0f),
                               std::vector<float>{1.0f, NAN, -2.0f}, wild(4096)}) {
    LaneSum<float> s;
    s.add(x.data(), int64_t(x.size()));
    EXPECT_TRUE(same_bits(ordered_sum(x.data(), int64_t(x.size())), s.value())) << x.size();
    EXPECT_TRUE(same_bits(s.value(), documented_sum(x))) << x.size();
  }
}

// value_rows: the sums of many sequences side by side, lane-major (reduce.cc's sum
// over outer dims), give each sequence's ordered_sum bits, short or cascaded.
TEST(SumOrder, ValueRowsGiveEachSumsBits) {
  constexpr int kL = LaneSum<float>::kLanes;
  for (int64_t n : {int64_t(5), int64_t(100), int64_t(4096 * 2 + 7)}) {
    const int64_t count = 3;
    std::vector<std::vector<float>> seqs;
    for (int64_t c = 0; c < count; ++c) {
      std::vector<float> x = wild(size_t(n + c));
      x.resize(size_t(n));
      seqs.push_back(x);
    }
    std::vector<float> l0(size_t(kL * count)), l1(l0.size()), l2(l0.size());
    for (int64_t k = 0; k < n; ++k) {
      for (int64_t c = 0; c < count; ++c) l0[size_t((k % kL) * count + c)] += seqs[size_t(c)][size_t(k)];
      if ((k + 1) % LaneSum<float>::kBlock == 0) {
        for (size_t i = 0; i < l0.size(); ++i) l1[i] += l0[i], l0[i] = 0;
        if ((k + 1) % (LaneSum<float>::kBlock * 128) == 0)
          for (size_t i = 0; i < l0.size(); ++i) l2[i] += l1[i], l1[i] = 0;
      }
    }
    LaneSum<float>::value_rows(l0.data(), l1.data(), l2.data(), count, n >= LaneSum<float>::kBlock);
    for (int64_t c = 0; c < count; ++c)
      EXPECT_TRUE(same_bits(l0[size_t(c)], ordered_sum(seqs[size_t(c)].data(), n))) << n << " " << c;
  }
}

// Up to four elements add left to right, as PyTorch's scalar loop: the running
// sum overflows where PyTorch's does.
TEST(SumOrder, AddsUpToFourElementsLeftToRight) {
  const float x[] = {3e38f, 3e38f, -3e38f, 1.0f};
  EXPECT_EQ(ordered_sum(x, 3), INFINITY);
  EXPECT_EQ(ordered_sum(x, 4), INFINITY);
  const float y[] = {1e8f, 1.0f, -1e8f, 1.0f};  // (1e8 + 1) rounds to 1e8
  EXPECT_EQ(ordered_sum(y, 4), 1.0f);
}

TEST(SumOrder, KeepsFloatErrorSmall) {
  std::vector<float> ones(size_t(1) << 25, 1.0f);  // a running float sum stops at 2^24
  EXPECT_EQ(ordered_sum(ones.data(), int64_t(ones.size())), float(1 << 25));
  std::vector<double> tenth(1000000, 0.1);
  EXPECT_NEAR(ordered_sum(tenth.data(), int64_t(tenth.size())), 100000.0, 1e-6);
}

}  // namespace
}  // namespace symmflow::kernels
