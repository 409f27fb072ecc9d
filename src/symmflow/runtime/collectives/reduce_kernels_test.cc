// fold_link (the relay of hierarchical collectives) against reduce_kernel (the
// one-node algorithms): a fold split into links at any rank, the accumulator
// carried between links, must give the same bits for every dtype and op.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "symmflow/runtime/collectives/reduce_kernels.h"

namespace symmflow::dist::detail {
namespace {

template <class T>
T value_of(double v) {
  T x{};
  if constexpr (std::is_same_v<T, bool>) x = v > 0;
  else if constexpr (std::is_integral_v<T>) x = T(int64_t(v * 100));
  else if constexpr (std::is_same_v<T, BFloat16>) x.bits = BFloat16::from_float(float(v));
  else if constexpr (std::is_same_v<T, Half>) x.bits = Half::from_float(float(v));
  else x = T(v);
  return x;
}

// Random bits that are valid values of `dt` (finite floats of mixed magnitude,
// so that the order of additions changes the result; small integers).
std::vector<char> random_values(DType dt, size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<char> b(n * element_size(dt));
  for (size_t i = 0; i < n; ++i) {
    double v = u(rng) * (i % 7 == 0 ? 1e4 : 1.0);
    SF_DISPATCH(dt, {
      T x = value_of<T>(v);
      std::memcpy(b.data() + i * sizeof(T), &x, sizeof(T));
    });
  }
  return b;
}

TEST(FoldLink, ChainsGiveTheBitsOfOneFold) {
  const size_t n = 1500;  // not a multiple of the kernels' block
  for (DType dt : {DType::f32, DType::f64, DType::bf16, DType::f16, DType::i32, DType::i64,
                   DType::boolean}) {
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::avg, ReduceOp::max, ReduceOp::min,
                        ReduceOp::product}) {
      if (dt == DType::boolean && op == ReduceOp::avg) continue;
      for (int W = 1; W <= 5; ++W) {
        std::vector<std::vector<char>> in;
        std::vector<const void*> ptrs;
        for (int j = 0; j < W; ++j) in.push_back(random_values(dt, n, uint32_t(97 * W + j)));
        for (auto& v : in) ptrs.push_back(v.data());
        const size_t isz = element_size(dt), asz = acc_itemsize(dt);
        std::vector<char> want(n * isz), got(n * isz, 0);
        reduce_kernel(dt, op, W, ptrs.data(), want.data(), n);
        // Every way of cutting ranks 0..W-1 into consecutive links.
        for (unsigned cuts = 0; cuts < (1u << (W - 1)); ++cuts) {
          std::vector<char> acc(n * asz), acc2(n * asz);
          int start = 0;
          bool first = true;
          for (int j = 1; j <= W; ++j) {
            if (j < W && !(cuts & (1u << (j - 1)))) continue;
            const bool last = j == W;
            fold_link(dt, op, first ? nullptr : acc.data(), j - start, ptrs.data() + start,
                      last ? nullptr : acc2.data(), last ? got.data() : nullptr, W, n);
            std::swap(acc, acc2);
            first = false;
            start = j;
          }
          ASSERT_EQ(0, std::memcmp(want.data(), got.data(), want.size()))
              << dtype_name(dt) << " " << reduce_op_name(op) << " W=" << W << " cuts=" << cuts;
        }
      }
    }
  }
}

TEST(FoldLink, AccumulatorIsWiderForHalfTypes) {
  EXPECT_EQ(acc_itemsize(DType::bf16), 4u);
  EXPECT_EQ(acc_itemsize(DType::f16), 4u);
  EXPECT_EQ(acc_itemsize(DType::f32), 4u);
  EXPECT_EQ(acc_itemsize(DType::i64), 8u);
}

}  // namespace
}  // namespace symmflow::dist::detail
