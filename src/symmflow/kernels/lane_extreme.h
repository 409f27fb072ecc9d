// The max or min of a dense float/double run, vectorized where that gives the
// ordered result (reduce.cc's amax/amin over a dense run, softmax's row max).
//
// The ordered rules (a NaN wins, the first one; among equal values the first;
// so max(0.0, -0.0) is the first of the two) make the extreme depend on the
// order only through NaNs and signed zeros. lane_extreme compares in vectors of
// 32 bytes (8 floats or 4 doubles, two at a time) and reports failure when a NaN
// or an infinity occurs or the extreme is a zero: then the caller runs its
// ordered loop. Otherwise the result is the exact extreme, the same whatever
// the lane layout. Plain x86-64 code compiles the vectors as pairs of SSE2
// registers; simd::run gives it AVX2 (gcc does not vectorize the scalar form: a
// compare-and-select is not a max without -ffinite-math-only).
//
//   float m;
//   if (!lane_extreme<true>(x, n, m)) { ... ordered loop ... }
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "symmflow/kernels/simd.h"

namespace symmflow::kernels {

namespace lane_extreme_detail {

// 32-byte vectors (gcc's vector extension; the attribute needs a concrete type).
typedef float F8 __attribute__((vector_size(32)));
typedef double D4 __attribute__((vector_size(32)));
typedef int32_t I8 __attribute__((vector_size(32)));  // their bits
typedef int64_t L4 __attribute__((vector_size(32)));

template <bool kMax, typename C>
bool extreme_loop(const C* x, int64_t n, C& out) {
  static_assert(std::is_same_v<C, float> || std::is_same_v<C, double>);
  using V = std::conditional_t<std::is_same_v<C, float>, F8, D4>;
  constexpr int64_t kLanes = 32 / sizeof(C), kStep = 2 * kLanes;
  if (n < kStep) return false;
  // By reference: a 32-byte vector passed by value changes the ABI without AVX (-Wpsabi).
  auto load = [x](int64_t i, V& v) { std::memcpy(&v, x + i, sizeof(V)); };
  auto pick = [](const V& v, V& m) {
    if constexpr (kMax) m = v > m ? v : m;
    else m = v < m ? v : m;
  };
  // bad ORs the bits of v - v: +0 (no bits) for finite v, NaN for NaN and +-inf.
  // An OR, not a sum: a 1-cycle chain, where an add's 3 cycles bounded the loop.
  using I = std::conditional_t<std::is_same_v<C, float>, I8, L4>;
  V m0, m1, v0, v1;
  load(0, m0);
  load(kLanes, m1);
  I b0 = (I)(m0 - m0), b1 = (I)(m1 - m1);
  int64_t i = kStep;
  for (; i + kStep <= n; i += kStep) {
    load(i, v0);
    load(i + kLanes, v1);
    b0 |= (I)(v0 - v0);
    b1 |= (I)(v1 - v1);
    pick(v0, m0);
    pick(v1, m1);
  }
  pick(m1, m0);
  b0 |= b1;
  C m[kLanes];
  std::memcpy(m, &m0, sizeof(V));
  bool bad = false;
  for (int64_t j = 0; j < kLanes; ++j) {
    bad |= b0[j] != 0;
  }
  C r = m[0];
  for (int64_t j = 0; j < kLanes; ++j) r = (kMax ? m[j] > r : m[j] < r) ? m[j] : r;
  for (; i < n; ++i) {
    bad |= !(x[i] - x[i] == C(0));
    r = (kMax ? x[i] > r : x[i] < r) ? x[i] : r;
  }
  if (bad || r == C(0)) return false;
  out = r;
  return true;
}

}  // namespace lane_extreme_detail

// The max (kMax) or min of x[0..n) into out, when the vectorized compare gives
// the ordered result; false (out untouched) when the caller must run the ordered
// loop: a NaN or infinity in x, a zero extreme, or fewer than 16 floats / 8 doubles.
template <bool kMax, typename C>
bool lane_extreme(const C* x, int64_t n, C& out) {
  bool ok = false;
  simd::run([&] { ok = lane_extreme_detail::extreme_loop<kMax>(x, n, out); });
  return ok;
}

// lane_extreme in the caller's instruction set, for a row loop already inside
// simd::run (as sum_order.h's ordered_sum_here: no clone entered per row).
template <bool kMax, typename C>
bool lane_extreme_here(const C* x, int64_t n, C& out) {
  return lane_extreme_detail::extreme_loop<kMax>(x, n, out);
}

}  // namespace symmflow::kernels
