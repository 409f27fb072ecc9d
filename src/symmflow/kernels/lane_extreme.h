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
#include <climits>
#include <cmath>
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
  // Across the lanes by halves in registers (a loop over the lanes' elements cost
  // about as much as a 256-float row's vector loop). Without NaN the extreme is
  // the same in any order, and a NaN or infinity fails below anyway.
  if constexpr (kLanes == 8) {
    V h = __builtin_shufflevector(m0, m0, 4, 5, 6, 7, 0, 1, 2, 3);
    pick(h, m0);
    h = __builtin_shufflevector(m0, m0, 2, 3, 0, 1, 6, 7, 4, 5);
    pick(h, m0);
    h = __builtin_shufflevector(m0, m0, 1, 0, 3, 2, 5, 4, 7, 6);
    pick(h, m0);
    b0 |= __builtin_shufflevector(b0, b0, 4, 5, 6, 7, 0, 1, 2, 3);
    b0 |= __builtin_shufflevector(b0, b0, 2, 3, 0, 1, 6, 7, 4, 5);
    b0 |= __builtin_shufflevector(b0, b0, 1, 0, 3, 2, 5, 4, 7, 6);
  } else {
    V h = __builtin_shufflevector(m0, m0, 2, 3, 0, 1);
    pick(h, m0);
    h = __builtin_shufflevector(m0, m0, 1, 0, 3, 2);
    pick(h, m0);
    b0 |= __builtin_shufflevector(b0, b0, 2, 3, 0, 1);
    b0 |= __builtin_shufflevector(b0, b0, 1, 0, 3, 2);
  }
  bool bad = b0[0] != 0;
  C r = m0[0];
  for (; i < n; ++i) {
    bad |= !(x[i] - x[i] == C(0));
    r = (kMax ? x[i] > r : x[i] < r) ? x[i] : r;
  }
  if (bad || r == C(0)) return false;
  out = r;
  return true;
}

// The first index of the max (kMax) or min of x[0..n): per lane the first of
// its extreme (a strict compare), then across lanes the extreme with the
// smallest index, which is the ordered loop's answer whatever the signs of
// zeros (-0.0 == 0.0: the first of them wins either way). A NaN makes the
// ordered answer its first index: then false, and the caller runs its loop.
// Indices in lanes of the element's width (int32 for float): n < 2^31 for float.
template <bool kMax, typename C>
bool arg_extreme_loop(const C* x, int64_t n, int64_t& at) {
  static_assert(std::is_same_v<C, float> || std::is_same_v<C, double>);
  using V = std::conditional_t<std::is_same_v<C, float>, F8, D4>;
  using I = std::conditional_t<std::is_same_v<C, float>, I8, L4>;
  using E = std::conditional_t<std::is_same_v<C, float>, int32_t, int64_t>;
  constexpr int64_t kLanes = 32 / sizeof(C), kStep = 2 * kLanes;
  if (n < kStep || (sizeof(E) == 4 && n > INT32_MAX / 2)) return false;
  auto load = [x](int64_t i, V& v) { std::memcpy(&v, x + i, sizeof(V)); };
  // Two chains (even and odd vectors): a compare and two blends per vector.
  V m0, m1, v0, v1;
  I i0, i1, step, nan;
  load(0, m0);
  load(kLanes, m1);
  for (int64_t j = 0; j < kLanes; ++j) i0[j] = E(j), i1[j] = E(j + kLanes), step[j] = E(kStep);
  nan = (I)(m0 != m0) | (I)(m1 != m1);
  I c0 = i0, c1 = i1;  // the indices of the vectors loaded next
  int64_t i = kStep;
  for (; i + kStep <= n; i += kStep) {
    c0 += step;
    c1 += step;
    load(i, v0);
    load(i + kLanes, v1);
    nan |= (I)(v0 != v0) | (I)(v1 != v1);
    const I t0 = kMax ? (I)(v0 > m0) : (I)(v0 < m0), t1 = kMax ? (I)(v1 > m1) : (I)(v1 < m1);
    m0 = t0 ? v0 : m0;
    i0 = t0 ? c0 : i0;
    m1 = t1 ? v1 : m1;
    i1 = t1 ? c1 : i1;
  }
  bool bad = false;
  for (int64_t j = 0; j < kLanes; ++j) bad |= nan[j] != 0;
  C best = m0[0];
  int64_t idx = i0[0];
  auto take = [&](C v, int64_t k) {
    if ((kMax ? v > best : v < best) || (v == best && k < idx)) best = v, idx = k;
  };
  for (int64_t j = 0; j < kLanes; ++j) take(m0[j], i0[j]), take(m1[j], i1[j]);
  for (; i < n; ++i) {  // the tail comes after every lane's elements: a strict compare
    bad |= x[i] != x[i];
    if (kMax ? x[i] > best : x[i] < best) best = x[i], idx = i;
  }
  if (bad) return false;
  at = idx;
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

// Whether v replaces best in a running max (kMax) or min, PyTorch's ordered rule:
// a NaN best sticks, a NaN v replaces anything, ties keep the first.
template <bool kMax, typename C>
bool replaces(C v, C best) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(best)) return false;
    if (std::isnan(v)) return true;
  }
  return kMax ? v > best : v < best;
}

// The max (kMax) or min of a dense run x[0..n), n >= 1, by the ordered rule: the
// lanes, or the ordered loop where they decline. The one row extreme of amax/amin
// over the last dim, softmax's row max and the fused row chains; in the caller's
// instruction set (a row loop inside simd::run).
template <bool kMax, typename C>
C row_extreme_here(const C* x, int64_t n) {
  C b = x[0];
  if (!lane_extreme_here<kMax>(x, n, b))
    for (int64_t i = 1; i < n; ++i)
      if (replaces<kMax>(x[i], b)) b = x[i];
  return b;
}

// The first index of the max (kMax) or min of x[0..n) into at, vectorized, in the
// caller's instruction set (a row loop inside simd::run); false (at untouched)
// when x holds a NaN or is short (fewer than 16 floats / 8 doubles): then the
// caller runs its ordered loop.
template <bool kMax, typename C>
bool lane_arg_extreme_here(const C* x, int64_t n, int64_t& at) {
  return lane_extreme_detail::arg_extreme_loop<kMax>(x, n, at);
}

}  // namespace symmflow::kernels
