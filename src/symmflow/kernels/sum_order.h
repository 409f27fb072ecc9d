// The one summation order of floating sums (sum, mean, softmax's row sum,
// layer_norm's mean and variance, and the fused kernels that call them): fixed, so
// a sum is bitwise the same in eager and compiled runs, on every rank, and for
// every layout of the same values; and wide, so that it runs at the speed of
// memory: 32 lanes are four independent AVX2 accumulators (an add has 3 cycles of
// latency; two 8-float chains, the order before, ran at a third of the loads'
// rate), as PyTorch's cascade sum keeps 4 vectors in flight.
//
// Element k of a reduction (k from 0, in row-major order of the reduced dims) is
// added to lane k % 32. Each lane is a cascade: its running sum l0 moves into l1
// after every 128 of the lane's elements (one block = 32 * 128 consecutive
// elements), l1 into l2 after every 128 blocks. A lane's value is (l2 + l1) + l0,
// and the 32 lanes are folded in halves: lane[j] = lane[j] + lane[j + w] for
// j < w, w = 16, 8, 4 (vector adds), and the last four are added left to right,
// ((lane[0] + lane[1]) + lane[2]) + lane[3], so a sum of up to 4 elements is
// PyTorch's left-to-right one (3e38 + 3e38 - 3e38 overflows to inf there too). Every step is an addition in V (float for
// f32/bf16/f16, as PyTorch's accumulator, so a float sum overflows to inf where
// PyTorch's does; double for f64). The error grows with about n / 4096 + 256
// roundings, not n.
//
// A sum of at most one block skips the cascade: its l1 and l2 are zero, and
// (0 + 0) + l0 is l0 bit for bit (a lane starts at +0 and an IEEE sum is -0 only
// when both terms are, so l0 is never -0), so short rows (softmax, layer_norm,
// sum over dim=-1 of 256 columns) pay the lanes and the fold only.
//
//   LaneSum<float> s;
//   s.add(x, n);                 // any number of calls, in sequence order
//   float total = s.value();
//   float same = ordered_sum(x, n);
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "symmflow/kernels/simd.h"

namespace symmflow::kernels {

namespace sum_order_detail {
// 64-byte vectors (gcc's vector extension, as lane_extreme.h): one zmm register
// in simd::run's AVX-512 clone, two ymm in the AVX2 one, four xmm in the SSE2
// build; the lanes and so the bits are the same in each.
typedef float F16 __attribute__((vector_size(64)));
typedef double D8 __attribute__((vector_size(64)));
}  // namespace sum_order_detail

template <typename V>
class LaneSum {
 public:
  static constexpr int kLanes = 32;
  static constexpr int64_t kBlock = 128 * kLanes;  // elements per cascade block

  // Adds x[0..n) as the next n elements of the sequence.
  void add(const V* x, int64_t n) {
    while (n > 0) {
      const int64_t m = std::min(n, kBlock - fill_);
      int64_t i = 0;
      if (fill_ % kLanes == 0)  // whole rows of the lanes: the vectorized loop (AVX2: simd.h)
        simd::run([&] { i = add_rows(l0_, x, m); });
      for (; i < m; ++i) l0_[(fill_ + i) % kLanes] += x[i];
      fill_ += m;
      x += m;
      n -= m;
      if (fill_ == kBlock) end_block();
    }
  }

  // Adds the whole rows of kLanes lanes of x[0..m) to l0; returns the elements taken.
  // Locals only (no references into the caller), so gcc vectorizes it.
  static int64_t add_rows(V* l0, const V* x, int64_t m) {
    V acc[kLanes];  // local, so it stays in registers (x may alias l0)
    for (int j = 0; j < kLanes; ++j) acc[j] = l0[j];
    int64_t i = 0;
    for (; i + kLanes <= m; i += kLanes)
#pragma GCC unroll 32  // as in short_sum
      for (int j = 0; j < kLanes; ++j) acc[j] += x[i + j];
    for (int j = 0; j < kLanes; ++j) l0[j] = acc[j];
    return i;
  }

  // The sum of x[0..n) for n <= kBlock, the lanes in vector registers (gcc's
  // vector extension: written as arrays, gcc kept them in memory or took the
  // partial rows element by element). 64-byte vectors: with 32-byte ones the
  // AVX-512 clone ran the AVX2 code, two loads and adds per 64 bytes (a row of
  // 256 floats: 10.9 ns against PyTorch's 10.3, docs/performance.md). A partial
  // first or last row is padded with +0 (a lane starts at +0 and is never -0, so
  // adding +0 leaves its bits).
  static V short_sum(const V* x, int64_t n) {
    static constexpr int kW = int(64 / sizeof(V)), kN = kLanes / kW;  // lanes per vector, vectors (static: clang lets the lambda use it uncaptured)
    using Vec = std::conditional_t<std::is_same_v<V, float>, sum_order_detail::F16, sum_order_detail::D8>;
    // By reference: a 64-byte vector passed by value changes the ABI without AVX-512 (-Wpsabi).
    auto add = [x](int64_t i, int64_t count, Vec& acc) {  // acc += x[i..i+count), padded with +0
      Vec v;
      if (count >= kW) {
        std::memcpy(&v, x + i, sizeof v);
      } else {
        V t[kW] = {};
        for (int64_t e = 0; e < count; ++e) t[e] = x[i + e];
        std::memcpy(&v, t, sizeof v);
      }
      acc += v;
    };
    Vec acc[kN];
#pragma GCC unroll 8
    for (int v = 0; v < kN; ++v) {
      acc[v] = Vec{};
      add(v * kW, n - v * kW, acc[v]);
    }
    int64_t i = kLanes;
    for (; i + kLanes <= n; i += kLanes)
#pragma GCC unroll 8
      for (int v = 0; v < kN; ++v) add(i + v * kW, kW, acc[v]);
    if (i < n)
#pragma GCC unroll 8
      for (int v = 0; v < kN; ++v) add(i + v * kW, n - i - v * kW, acc[v]);
    // fold(): halves of whole vectors, then within the first vector.
#pragma GCC unroll 8
    for (int w = kN / 2; w >= 1; w /= 2)
#pragma GCC unroll 8
      for (int v = 0; v < w; ++v) acc[v] += acc[v + w];
    return fold_vector(acc[0]);
  }

  // The lanes of one vector folded: lane[j] + lane[j + w] for w = half the
  // lanes down to 4, each step an add of the vector's two halves in registers,
  // then the last four left to right (fold() is this on all kLanes lanes).
  // Written as loops over an array, gcc folded a 16-lane vector through the
  // stack, one scalar load, add and store per lane (a third of a 256-float
  // row's time in fused RMSNorm's row sums).
  template <typename Vec>
  static V fold_vector(const Vec& a) {
    if constexpr (sizeof(Vec) > 4 * sizeof(V)) {
      typedef V Half __attribute__((vector_size(sizeof(Vec) / 2)));
      Half lo, hi;
      std::memcpy(&lo, &a, sizeof lo);
      std::memcpy(&hi, reinterpret_cast<const char*>(&a) + sizeof lo, sizeof hi);
      return fold_vector(Half(lo + hi));
    } else {
      V lane[4];
      std::memcpy(lane, &a, sizeof lane);
      return ((lane[0] + lane[1]) + lane[2]) + lane[3];
    }
  }

  V value() const {
    V lane[kLanes];
    if (blocks_ == 0)  // l1 and l2 are zero: see the header
      for (int j = 0; j < kLanes; ++j) lane[j] = l0_[j];
    else
      for (int j = 0; j < kLanes; ++j) lane[j] = (l2_[j] + l1_[j]) + l0_[j];
    return fold(lane);
  }

  // The lanes folded in halves down to four, then added left to right, into one
  // total: fold_vector on all kLanes lanes, so that short_sum's fold and this
  // one are one order written once.
  static V fold(const V* lane) {
    typedef V Lanes __attribute__((vector_size(kLanes * sizeof(V))));
    Lanes all;
    std::memcpy(&all, lane, sizeof all);
    return fold_vector(all);
  }

  // The sums of `count` adjacent columns of a matrix: element k of column c is
  // x[k * stride + c] (k < n), each column summed in this order (a sum over the
  // outer dim), lane-major in l0, l1, l2 (kLanes * count each; l1 and l2 unread
  // when n < kBlock), the totals left in l0[0..count). Row k adds to the row of
  // lane k % 32: with count * kLanes in L1 the adds stream.
  static void column_sums(const V* x, int64_t n, int64_t stride, int64_t count, V* l0, V* l1, V* l2) {
    const int64_t lanes = kLanes * count;
    std::fill_n(l0, lanes, V(0));
    if (n >= kBlock) std::fill_n(l1, lanes, V(0)), std::fill_n(l2, lanes, V(0));
    for (int64_t b0 = 0; b0 < n; b0 += kBlock) {
      const int64_t end = std::min(n, b0 + kBlock);
      for (int64_t k = b0; k < end; ++k) {
        V* a = l0 + (k % kLanes) * count;
        const V* row = x + k * stride;
        for (int64_t i = 0; i < count; ++i) a[i] += row[i];
      }
      if (end - b0 < kBlock) break;
      for (int64_t i = 0; i < lanes; ++i) l1[i] += l0[i], l0[i] = V(0);
      if ((end / kBlock) % 128 != 0) continue;
      for (int64_t i = 0; i < lanes; ++i) l2[i] += l1[i], l1[i] = V(0);
    }
    value_rows(l0, l1, l2, count, n >= kBlock);
  }

  // value() for many sums at once, in place: l0, l1, l2 hold the lanes of `count`
  // sums lane-major (lane j of sum i at [j * count + i], reduce.cc's sums over
  // outer dims), and `cascaded` says whether any block ended (else l1 and l2 are
  // zero and unread). Row operations, so they vectorize across the sums; the
  // totals end in l0[0..count).
  static void value_rows(V* l0, const V* l1, const V* l2, int64_t count, bool cascaded) {
    if (cascaded)
      for (int64_t i = 0; i < kLanes * count; ++i) l0[i] = (l2[i] + l1[i]) + l0[i];
    for (int64_t w = kLanes / 2; w >= 4; w /= 2)
      for (int64_t i = 0; i < w * count; ++i) l0[i] = l0[i] + l0[i + w * count];
    for (int64_t j = 1; j < 4; ++j)
      for (int64_t i = 0; i < count; ++i) l0[i] = l0[i] + l0[i + j * count];
  }

 private:
  void end_block() {
    for (int j = 0; j < kLanes; ++j) {
      l1_[j] += l0_[j];
      l0_[j] = V(0);
    }
    fill_ = 0;
    if (++blocks_ % 128 != 0) return;
    for (int j = 0; j < kLanes; ++j) {
      l2_[j] += l1_[j];
      l1_[j] = V(0);
    }
  }

  V l0_[kLanes] = {}, l1_[kLanes] = {}, l2_[kLanes] = {};
  int64_t fill_ = 0;    // elements of the current block so far
  int64_t blocks_ = 0;  // whole blocks so far
};

// The sum of x[0..n) in LaneSum's order, in the caller's instruction set: for
// code already inside simd::run (a row loop), where a nested simd::run per row
// would cost a call and an AVX state change per row (~25 ns against ~30 for a
// row of 256).
template <typename V>
V ordered_sum_here(const V* x, int64_t n) {
  using S = LaneSum<V>;
  if (n <= S::kBlock) return S::short_sum(x, n);
  S s;
  s.add(x, n);
  return s.value();
}

// The sum of x[0..n) in LaneSum's order, AVX2 where the CPU has it (simd.h).
template <typename V>
V ordered_sum(const V* x, int64_t n) {
  V total;
  simd::run([&] { total = ordered_sum_here(x, n); });
  return total;
}

}  // namespace symmflow::kernels
