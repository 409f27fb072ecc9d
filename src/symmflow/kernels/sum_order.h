// The one summation order of floating sums (sum, mean, softmax's row sum): fixed,
// so a sum is bitwise the same in eager and compiled runs, on every rank, and for
// every layout of the same values; and wide, so the compiler vectorizes it.
//
// Element k of a reduction (k from 0, in row-major order of the reduced dims) is
// added to lane k % 16. Each lane is a cascade: its running sum l0 moves into l1
// after every 128 of the lane's elements (one block = 16 * 128 consecutive
// elements), l1 into l2 after every 128 blocks. A lane's value is (l2 + l1) + l0,
// and the 16 lanes are added as a tree of neighbours: lane[j] = lane[2j] +
// lane[2j + 1] for j < 8, then < 4, < 2, < 1 (so up to 3 elements are summed left
// to right, as PyTorch's scalar loop does). Every step is an addition in V (float for f32/bf16/f16, as
// PyTorch's accumulator, so a float sum overflows to inf where PyTorch's does;
// double for f64). The error grows with about n / 2048 + 256 roundings, not n.
//
//   LaneSum<float> s;
//   s.add(x, n);                 // any number of calls, in sequence order
//   float total = s.value();
//   float same = ordered_sum(x, n);
#pragma once
#include <algorithm>
#include <cstdint>

#include "symmflow/kernels/simd.h"

namespace symmflow::kernels {

template <typename V>
class LaneSum {
 public:
  static constexpr int kLanes = 16;
  static constexpr int64_t kBlock = 128 * kLanes;  // elements per cascade block

  // Adds x[0..n) as the next n elements of the sequence.
  void add(const V* x, int64_t n) {
    while (n > 0) {
      const int64_t m = std::min(n, kBlock - fill_);
      int64_t i = 0;
      if (fill_ % kLanes == 0)  // whole rows of 16 lanes: the vectorized loop (AVX2: simd.h)
        simd::run([&] { i = add_rows(l0_, x, m); });
      for (; i < m; ++i) l0_[(fill_ + i) % kLanes] += x[i];
      fill_ += m;
      x += m;
      n -= m;
      if (fill_ == kBlock) end_block();
    }
  }

  // Adds the whole rows of 16 lanes of x[0..m) to l0; returns the elements taken.
  // Locals only (no references into the caller), so gcc vectorizes it.
  static int64_t add_rows(V* l0, const V* x, int64_t m) {
    V acc[kLanes];  // local, so it stays in registers (x may alias l0)
    for (int j = 0; j < kLanes; ++j) acc[j] = l0[j];
    int64_t i = 0;
    for (; i + kLanes <= m; i += kLanes)
      for (int j = 0; j < kLanes; ++j) acc[j] += x[i + j];
    for (int j = 0; j < kLanes; ++j) l0[j] = acc[j];
    return i;
  }

  V value() const { return combine(l0_, l1_, l2_, 1); }

  // The total from the three cascade levels of the 16 lanes; lane j of a level at
  // level[j * stride] (reduce.cc keeps many sums' lanes side by side).
  static V combine(const V* l0, const V* l1, const V* l2, int64_t stride) {
    V lane[kLanes];
    for (int j = 0; j < kLanes; ++j) lane[j] = (l2[j * stride] + l1[j * stride]) + l0[j * stride];
    for (int w = kLanes / 2; w >= 1; w /= 2)
      for (int j = 0; j < w; ++j) lane[j] = lane[2 * j] + lane[2 * j + 1];
    return lane[0];
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

// The sum of x[0..n) in LaneSum's order.
template <typename V>
V ordered_sum(const V* x, int64_t n) {
  LaneSum<V> s;
  s.add(x, n);
  return s.value();
}

}  // namespace symmflow::kernels
