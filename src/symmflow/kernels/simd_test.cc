#include "symmflow/kernels/simd.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace symmflow::kernels {
namespace {

// The AVX2 clone and the plain build compute the same bits: the loop below is
// a * b + c (FMA would round once: the build must keep -ffp-contract=off), a
// division and a square root, all vectorized in both.
TEST(Simd, Avx2CloneGivesThePlainBuildsBits) {
  if (!simd::avx2()) GTEST_SKIP() << "no AVX2 on this CPU";
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> d(-10, 10);
  const int64_t n = 1003;
  std::vector<float> a(n), b(n), c(n), plain(n), wide(n);
  for (int64_t i = 0; i < n; ++i) a[i] = d(rng), b[i] = d(rng), c[i] = d(rng);
  auto body = [&](std::vector<float>& y) {
    return [&] {
      for (int64_t i = 0; i < n; ++i) y[i] = (a[i] * b[i] + c[i]) / std::sqrt(std::fabs(c[i]) + 1.0f);
    };
  };
  body(plain)();
  simd::run_avx2(body(wide));
  EXPECT_EQ(std::memcmp(plain.data(), wide.data(), sizeof(float) * size_t(n)), 0);
}

// The same for the AVX-512 clone, and a sum in 32 explicit lanes (sum_order.h's
// shape): vectorized at 16 floats, each lane still adds in its own order.
TEST(Simd, Avx512CloneGivesThePlainBuildsBits) {
  if (!simd::avx512()) GTEST_SKIP() << "no AVX-512F on this CPU (or SYMMFLOW_SIMD=avx2)";
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> d(-10, 10);
  const int64_t n = 4099;
  std::vector<float> a(n), b(n), c(n), plain(n), wide(n);
  for (int64_t i = 0; i < n; ++i) a[i] = d(rng), b[i] = d(rng), c[i] = d(rng);
  float plain_sum = 0, wide_sum = 0;
  auto body = [&](std::vector<float>& y, float& total) {
    return [&] {
      for (int64_t i = 0; i < n; ++i) y[i] = (a[i] * b[i] + c[i]) / std::sqrt(std::fabs(c[i]) + 1.0f);
      float lanes[32] = {};
      for (int64_t i = 0; i + 32 <= n; i += 32)
        for (int j = 0; j < 32; ++j) lanes[j] += y[size_t(i + j)];
      total = 0;
      for (float l : lanes) total += l;
    };
  };
  body(plain, plain_sum)();
  simd::run_avx512(body(wide, wide_sum));
  EXPECT_EQ(std::memcmp(plain.data(), wide.data(), sizeof(float) * size_t(n)), 0);
  EXPECT_EQ(std::memcmp(&plain_sum, &wide_sum, sizeof(float)), 0);
}

TEST(Simd, RunCallsTheFunctionOnce) {
  int calls = 0;
  simd::run([&] { ++calls; });
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace symmflow::kernels
