#include "symmflow/kernels/lane_extreme.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace symmflow::kernels {
namespace {

template <bool kMax, typename C>
C ordered_extreme(const C* x, int64_t n) {
  C b = x[0];
  for (int64_t i = 1; i < n; ++i) b = (kMax ? x[i] > b : x[i] < b) ? x[i] : b;
  return b;
}

template <typename C>
void check_every_length_and_offset() {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> d(-100, 100);
  std::vector<C> x(200);
  for (C& v : x) v = C(d(rng));
  for (int64_t off = 0; off < 5; ++off)
    for (int64_t n = 1; n + off <= int64_t(x.size()); ++n) {
      C m = C(0), mn = C(0);
      const bool ok = lane_extreme<true>(x.data() + off, n, m);
      const bool okn = lane_extreme<false>(x.data() + off, n, mn);
      ASSERT_EQ(ok, n >= int64_t(64 / sizeof(C))) << n;  // two vectors of 32 bytes at least
      ASSERT_EQ(okn, ok);
      if (!ok) continue;
      ASSERT_EQ(m, (ordered_extreme<true>(x.data() + off, n))) << off << " " << n;
      ASSERT_EQ(mn, (ordered_extreme<false>(x.data() + off, n))) << off << " " << n;
    }
}

TEST(LaneExtreme, EqualsTheOrderedExtremeForEveryLengthAndOffset) {
  check_every_length_and_offset<float>();
  check_every_length_and_offset<double>();
}

// Where NaNs and signed zeros make the order matter, it leaves the answer to the
// ordered loop: a NaN or infinity anywhere (vector body or tail), a zero extreme.
TEST(LaneExtreme, RefusesNaNInfinityAndZeroExtreme) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (size_t at : {0, 9, 31, 36}) {  // body and tail of 37 elements
    for (float bad : {nan, inf, -inf}) {
      std::vector<float> x(37, 1.0f);
      x[at] = bad;
      float m = 5.0f;
      EXPECT_FALSE(lane_extreme<true>(x.data(), int64_t(x.size()), m)) << at << " " << bad;
      EXPECT_FALSE(lane_extreme<false>(x.data(), int64_t(x.size()), m)) << at << " " << bad;
      EXPECT_EQ(m, 5.0f);
    }
  }
  std::vector<float> z(40, -1.0f);
  z[3] = -0.0f;
  z[20] = 0.0f;
  float m = 5.0f;
  EXPECT_FALSE(lane_extreme<true>(z.data(), int64_t(z.size()), m));
  EXPECT_TRUE(lane_extreme<false>(z.data(), int64_t(z.size()), m));  // min -1 is not a zero
  EXPECT_EQ(m, -1.0f);
}

}  // namespace
}  // namespace symmflow::kernels
