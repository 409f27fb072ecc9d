#include "symmflow/kernels/vec_math.h"

#include "symmflow/kernels/gelu_erf.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace symmflow::kernels::vec {
namespace {

const Fn kAll[] = {Fn::exp, Fn::log,  Fn::log2, Fn::log1p,   Fn::expm1, Fn::sin,
                   Fn::cos, Fn::tanh, Fn::erf,  Fn::sigmoid, Fn::silu,  Fn::gelu};

// -5 .. 5 and a few special values, 1000 elements.
std::vector<float> inputs() {
  std::vector<float> v;
  for (int i = 0; i < 990; ++i) v.push_back(-5.0f + 10.0f * float(i) / 989.0f);
  for (float s : {0.0f, -0.0f, 1e-30f, -1e-30f, 88.0f, -104.0f, 1e30f, -1e30f,
                  std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()})
    v.push_back(s);
  return v;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0 || (a != a && b != b); }

// An element's result depends on its value only: not on where it sits in the
// array (vector body or padded tail, any alignment) and not on map vs apply.
TEST(VecMath, ResultDoesNotDependOnPositionOrLength) {
  const std::vector<float> x = inputs();
  for (Fn f : kAll) {
    std::vector<float> whole(x.size());
    map(f, x.data(), whole.data(), int64_t(x.size()));
    for (size_t shift : {1, 3, 7}) {
      std::vector<float> part(x.size() - shift);
      map(f, x.data() + shift, part.data(), int64_t(part.size()));
      for (size_t i = 0; i < part.size(); ++i)
        ASSERT_TRUE(same_bits(part[i], whole[i + shift])) << int(f) << " at " << i + shift;
    }
    for (size_t i = 0; i < x.size(); i += 37) ASSERT_TRUE(same_bits(apply(f, x[i]), whole[i])) << int(f);
    std::vector<float> in_place = x;  // x == y is allowed
    map(f, in_place.data(), in_place.data(), int64_t(in_place.size()));
    for (size_t i = 0; i < x.size(); ++i) ASSERT_TRUE(same_bits(in_place[i], whole[i]));
  }
}

// A neighbour in the same vector does not change an element's bits: SLEEF's
// sin and cos pick their argument reduction per vector (every lane below 125,
// f32, or 15, f64, takes the short one), so symmflow calls their deterministic
// variants, which choose per lane. Every value of -100 .. 100 here shares its
// vector with a huge one, an infinity or a NaN, and must give what it gives alone.
template <typename T>
void expect_lanes_independent(T huge) {
  const T specials[] = {huge, T(3e4), T(130), std::numeric_limits<T>::infinity(), std::numeric_limits<T>::quiet_NaN()};
  for (Fn f : kAll) {
    std::vector<T> x;
    for (int i = 0; i < 4000; ++i) {
      x.push_back(T(-100) + T(200) * T(i) / T(3999));
      if (i % 3 == 0) x.push_back(specials[size_t(i / 3) % std::size(specials)]);
    }
    std::vector<T> y(x.size());
    map(f, x.data(), y.data(), int64_t(x.size()));
    for (size_t i = 0; i < x.size(); ++i) {
      const T alone = apply(f, x[i]);
      ASSERT_TRUE(std::memcmp(&alone, &y[i], sizeof alone) == 0 || (alone != alone && y[i] != y[i]))
          << "fn " << int(f) << " x " << x[i] << ": " << y[i] << " beside its neighbours, " << alone << " alone";
    }
  }
}

TEST(VecMath, AnElementsBitsDoNotDependOnItsNeighboursInTheVector) {
  expect_lanes_independent<float>(1e30f);
  expect_lanes_independent<double>(1e300);
}

double reference(Fn f, double x) {
  switch (f) {
    case Fn::exp: return std::exp(x);
    case Fn::log: return std::log(x);
    case Fn::log2: return std::log2(x);
    case Fn::log1p: return std::log1p(x);
    case Fn::expm1: return std::expm1(x);
    case Fn::sin: return std::sin(x);
    case Fn::cos: return std::cos(x);
    case Fn::tanh: return std::tanh(x);
    case Fn::erf: return std::erf(x);
    case Fn::sigmoid: return 1 / (1 + std::exp(-x));
    case Fn::silu: return x / (1 + std::exp(-x));
    case Fn::gelu: return x * 0.5 * (1 + std::erf(x * M_SQRT1_2));
  }
  return 0;
}

// SLEEF's u10 functions are within 1 ulp; the formulas around them (sigmoid, silu)
// add a few roundings. Compared with a double-precision reference in float ulps,
// away from gelu's cancellation (1 + erf(x) for x < -1: erf's error near -1 grows
// relative to the small difference, in PyTorch as here). f32 gelu is oneDNN's
// gelu_erf (PyTorch's): Abramowitz and Stegun's erf (7.1.26, |error| <= 1.5e-7),
// so its bound adds 0.5 |x| 1.5e-7 to the 4 ulp.
TEST(VecMath, FloatResultsWithinFourUlpOfDoubleReference) {
  for (Fn f : kAll) {
    for (float x : inputs()) {
      if (!std::isfinite(x) || std::fabs(x) > 80 || (f == Fn::gelu && x < -1.0f)) continue;
      if ((f == Fn::log || f == Fn::log2) && x <= 0) continue;
      if (f == Fn::log1p && x <= -1) continue;
      const double want = reference(f, double(x));
      const float got = apply(f, x);
      const float w = std::fabs(float(want));
      const double ulp = std::max(double(std::nextafter(w, INFINITY) - w),
                                  double(std::numeric_limits<float>::denorm_min()));
      const double erf_error = f == Fn::gelu ? 0.5 * std::fabs(double(x)) * 1.5e-7 : 0.0;
      EXPECT_LE(std::fabs(double(got) - want), 4 * ulp + erf_error) << int(f) << " at " << x;
    }
  }
}

TEST(VecMath, SpecialValuesAsIEEE) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(apply(Fn::exp, -inf), 0.0f);
  EXPECT_EQ(apply(Fn::exp, inf), inf);
  EXPECT_EQ(apply(Fn::exp, 100.0f), inf);  // overflow
  EXPECT_EQ(apply(Fn::log, 0.0f), -inf);
  EXPECT_TRUE(std::isnan(apply(Fn::log, -1.0f)));
  EXPECT_EQ(apply(Fn::tanh, inf), 1.0f);
  EXPECT_EQ(apply(Fn::sigmoid, -inf), 0.0f);
  EXPECT_EQ(apply(Fn::erf, -inf), -1.0f);
  for (Fn f : kAll) EXPECT_TRUE(std::isnan(apply(f, nan))) << int(f);
  EXPECT_EQ(apply(Fn::exp, 0.0), 1.0);  // f64 too
  EXPECT_NEAR(apply(Fn::log, 10.0), std::log(10.0), 1e-15);
}

// f32 bit patterns spread over all of them (every 251st, 17.1 million: every
// exponent, both signs, NaNs and infinities), in vectors of both widths.
std::vector<float> spread_bit_patterns() {
  std::vector<float> x;
  x.reserve((uint64_t(1) << 32) / 251 + 1);
  for (uint64_t u = 0; u < (uint64_t(1) << 32); u += 251) {
    const uint32_t b = uint32_t(u);
    float f;
    std::memcpy(&f, &b, sizeof f);
    x.push_back(f);
  }
  return x;
}

// On a CPU with AVX-512F, f32 runs in 16 lanes where SLEEF's 16-lane function
// gives the 8-lane one's bits, NaNs included: eager, compiled and PyTorch
// (8 lanes) then agree whichever width a machine has. (All 2^32 inputs were
// checked once by hand; docs/performance.md.)
TEST(VecMath, SixteenLanesGiveTheEightLanesBitsForEveryFunctionThatUsesThem) {
  if (!simd() || !wide(Fn::exp)) GTEST_SKIP() << "no AVX-512F here (or SYMMFLOW_SIMD=avx2)";
  const std::vector<float> x = spread_bit_patterns();
  std::vector<float> eight(x.size()), sixteen(x.size());
  int checked = 0;
  for (Fn f : kAll) {
    if (!wide(f)) continue;
    ++checked;
    map_lanes(8, f, x.data(), eight.data(), int64_t(x.size()));
    map_lanes(16, f, x.data(), sixteen.data(), int64_t(x.size()));
    for (size_t i = 0; i < x.size(); ++i)
      ASSERT_EQ(std::memcmp(&eight[i], &sixteen[i], sizeof(float)), 0)
          << "fn " << int(f) << " x " << x[i] << ": 8 lanes " << eight[i] << ", 16 lanes " << sixteen[i];
  }
  EXPECT_EQ(checked, 12);  // every function, log and log2 included
}

// exp16 (SLEEF's exp with one scalef for its ldexp) at the edges where its
// last step could differ from SLEEF's: results that round to subnormals and to
// zero near -104 (where SLEEF's cut to 0 begins), the overflow from 88.72 to
// 100 (where SLEEF's cut to infinity begins), every input of the first few
// thousand bit patterns above each edge, and the specials. `sf_exp16
// --exhaustive` checks all 2^32 (docs/performance.md, round 9).
TEST(VecMath, SixteenLaneExpKeepsSleefsBitsAtItsEdges) {
  if (!simd() || !wide(Fn::exp)) GTEST_SKIP() << "no AVX-512F here (or SYMMFLOW_SIMD=avx2)";
  std::vector<float> x = {0.0f, -0.0f, 1e-30f, -1e-30f, 1.0f, -1.0f, 88.72f, 88.7228394f, 100.0f, 101.0f,
                          -87.3f, -103.9f, -104.0f, -104.00001f, -150.0f, 1e10f, -1e10f,
                          std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN()};
  for (float edge : {-104.0f, -103.28f, -87.34f, 88.72f, 100.0f}) {
    float v = edge;
    for (int i = 0; i < 4096; ++i) {
      x.push_back(v);
      x.push_back(-v);
      v = std::nextafter(v, edge < 0 ? 0.0f : 1000.0f);
    }
  }
  std::vector<float> eight(x.size()), sixteen(x.size());
  for (Fn f : {Fn::exp, Fn::sigmoid, Fn::silu}) {
    map_lanes(8, f, x.data(), eight.data(), int64_t(x.size()));
    map_lanes(16, f, x.data(), sixteen.data(), int64_t(x.size()));
    for (size_t i = 0; i < x.size(); ++i)
      ASSERT_EQ(std::memcmp(&eight[i], &sixteen[i], sizeof(float)), 0)
          << "fn " << int(f) << " x " << x[i] << ": 8 lanes " << eight[i] << ", 16 lanes " << sixteen[i];
  }
}

// f32 gelu is PyTorch's (oneDNN's eltwise gelu_erf, the primitive PyTorch 1.13
// runs) in symmflow's own code: every width gives the primitive's bits, NaNs,
// infinities and subnormals included (a subnormal's half rounds to even, which
// a gelu computing s / sqrt(2) / sqrt(2) got wrong). `sf_gelu_erf --exhaustive`
// (bench/gelu_erf.cc) checks all 2^32 inputs, against either oneDNN kernel.
TEST(VecMath, GeluGivesOneDnnsBitsAtEachWidth) {
  std::vector<float> x = spread_bit_patterns();
  for (uint32_t b = 0; b < 4096; ++b) {  // the smallest subnormals, both signs
    for (uint32_t sign : {0u, 0x80000000u}) {
      float f;
      const uint32_t u = b | sign;
      std::memcpy(&f, &u, sizeof f);
      x.push_back(f);
    }
  }
  std::vector<float> onednn(x.size()), got(x.size());
  gelu_erf_lanes(0, x.data(), onednn.data(), int64_t(x.size()));
  int widths = 0;
  for (int lanes : {8, 16}) {
    if (lanes == 8 ? !simd() : !wide(Fn::gelu)) continue;
    ++widths;
    gelu_erf_lanes(lanes, x.data(), got.data(), int64_t(x.size()));
    for (size_t i = 0; i < x.size(); ++i)
      ASSERT_EQ(std::memcmp(&onednn[i], &got[i], sizeof(float)), 0)
          << lanes << " lanes, x " << x[i] << ": oneDNN " << onednn[i] << ", symmflow " << got[i];
  }
  if (widths == 0) GTEST_SKIP() << "no AVX2 + FMA here: gelu is oneDNN's primitive itself";
}

// log and log2 run in 16 lanes too: SLEEF's 16-lane ones return the input's
// NaN or a negative NaN where the 8-lane ones (PyTorch's) return the quiet NaN
// 0x7fc00000, for every negative input and every NaN; F16 sets its NaN lanes to
// that NaN. Negatives, -inf, -0 (whose log is -inf, not a NaN) and NaNs of both
// signs with payloads give the 8 lanes' bits.
TEST(VecMath, LogOfANegativeOrANaNIsTheEightLanesQuietNaNInSixteenLanes) {
  if (!simd() || !wide(Fn::exp)) GTEST_SKIP() << "no AVX-512F here (or SYMMFLOW_SIMD=avx2)";
  EXPECT_TRUE(wide(Fn::log));
  EXPECT_TRUE(wide(Fn::log2));
  std::vector<float> x = {-0.0f, 0.0f, -std::numeric_limits<float>::infinity(), -1e-40f, -1.0f, 1.0f};
  for (int i = 1; i <= 100; ++i) x.push_back(-0.37f * float(i));
  for (uint32_t bits : {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xff800001u, 0x7fc12345u, 0xffffffffu}) {
    float f;
    std::memcpy(&f, &bits, sizeof f);
    x.push_back(f);
  }
  for (Fn f : {Fn::log, Fn::log2}) {
    std::vector<float> sixteen(x.size()), eight(x.size());
    map_lanes(16, f, x.data(), sixteen.data(), int64_t(x.size()));
    map_lanes(8, f, x.data(), eight.data(), int64_t(x.size()));
    for (size_t i = 0; i < x.size(); ++i) {
      uint32_t got, want;
      std::memcpy(&got, &sixteen[i], sizeof got);
      std::memcpy(&want, &eight[i], sizeof want);
      EXPECT_EQ(got, want) << "fn " << int(f) << " x " << x[i] << " (element " << i << ")";
      if (std::isnan(x[i]) || x[i] < 0) {
        EXPECT_EQ(got, 0x7fc00000u) << "fn " << int(f) << " element " << i;
      }
    }
  }
}

}  // namespace
}  // namespace symmflow::kernels::vec
