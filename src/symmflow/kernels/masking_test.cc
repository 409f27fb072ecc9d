#include "symmflow/kernels/masking.h"

#include <gtest/gtest.h>

#include <cmath>

#include "symmflow/kernels/copy.h"
#include "symmflow/kernels/kernel_testing.h"
#include "symmflow/kernels/views.h"

namespace symmflow::kernels {
namespace {

using testing::from;
using testing::iota;
using testing::values;
using V = std::vector<double>;

TEST(Masking, TriuTrilBands) {
  Tensor x = from({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {3, 4});
  EXPECT_EQ(values(triu(x)), V({1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12}));
  EXPECT_EQ(values(triu(x, 1)), V({0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12}));
  EXPECT_EQ(values(triu(x, -1)), V({1, 2, 3, 4, 5, 6, 7, 8, 0, 10, 11, 12}));
  EXPECT_EQ(values(tril(x)), V({1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0}));
  EXPECT_EQ(values(tril(x, -1)), V({0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0}));
  EXPECT_EQ(values(tril(x, 10)), values(x));
  EXPECT_EQ(values(triu(x, 10)), V(12, 0));
  // Batched over leading dims, strided input, bool (the causal mask).
  Tensor b = transpose(from({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2}), 1, 2);
  EXPECT_EQ(values(triu(b)), V({1, 3, 0, 4, 5, 7, 0, 8}));
  Tensor ones = from(V(9, 1), {3, 3}, DType::boolean);
  Tensor causal = triu(ones, 1);
  EXPECT_EQ(causal.dtype(), DType::boolean);
  EXPECT_EQ(values(causal), V({0, 1, 1, 0, 0, 1, 0, 0, 0}));
  // A fresh tensor: x is untouched.
  EXPECT_EQ(values(x)[4], 5);
  EXPECT_THROW(triu(from({1, 2}, {2})), Error);
  EXPECT_THROW(tril(Tensor::meta({}, DType::f32)), Error);
  EXPECT_TRUE(tril(Tensor::meta({2, 3, 3}, DType::f16)).is_meta());
}

TEST(Masking, MaskedFillBroadcastsAndKeepsSelfDType) {
  Tensor x = from({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor row = from({1, 0, 1}, {3}, DType::boolean);
  EXPECT_EQ(values(masked_fill(x, row, -INFINITY)), V({-INFINITY, 2, -INFINITY, -INFINITY, 5, -INFINITY}));
  // self broadcasts too: [3] with a [2, 3] mask gives [2, 3].
  Tensor m = from({1, 0, 0, 0, 1, 0}, {2, 3}, DType::boolean);
  Tensor r = masked_fill(from({7, 8, 9}, {3}), m, 0);
  EXPECT_EQ(r.sizes(), (Shape{2, 3}));
  EXPECT_EQ(values(r), V({0, 8, 9, 7, 0, 9}));
  // An integer self: 1.5 truncates, NaN does not fit.
  Tensor i = from({1, 2, 3}, {3}, DType::i64);
  Tensor ri = masked_fill(i, row, 1.5);
  EXPECT_EQ(ri.dtype(), DType::i64);
  EXPECT_EQ(values(ri), V({1, 2, 1}));
  EXPECT_THROW(masked_fill(i, row, NAN), Error);
  EXPECT_THROW(masked_fill(from({1}, {1}, DType::f16), from({1}, {1}, DType::boolean), 1e6), Error);
  // A 0-dim tensor value (masked_fill.Tensor), converted to self's dtype.
  EXPECT_EQ(values(masked_fill(i, row, from({4.75}, {}, DType::f64))), V({4, 2, 4}));
  EXPECT_EQ(values(masked_fill(i, row, from({int64_t(1) << 40}, {}, DType::i64)))[0], double(int64_t(1) << 40));
  EXPECT_THROW(masked_fill(x, row, from({1}, {1})), Error);  // not 0-dim
  EXPECT_THROW(masked_fill(x, from({1, 0, 1}, {3}, DType::i64), 0), Error);  // not bool
  Tensor meta = masked_fill(Tensor::meta({4, 1}, DType::bf16), Tensor::meta({3}, DType::boolean), 2.0);
  EXPECT_TRUE(meta.is_meta());
  EXPECT_EQ(meta.sizes(), (Shape{4, 3}));
  EXPECT_EQ(meta.dtype(), DType::bf16);
}

TEST(Masking, MaskedFillInPlaceThroughView) {
  Tensor x = iota({2, 3});
  Tensor col = select(x, 1, 1);  // x[:, 1]
  const Tensor& r = masked_fill_(col, from({0, 1}, {2}, DType::boolean), -1);
  EXPECT_TRUE(r.is_same(col));
  EXPECT_EQ(values(x), V({0, 1, 2, 3, -1, 5}));
  masked_fill_(x, from({1, 0, 0}, {3}, DType::boolean), from({9}, {}));
  EXPECT_EQ(values(x), V({9, 1, 2, 9, -1, 5}));
  // The broadcast shape must be self's.
  EXPECT_THROW(masked_fill_(from({1, 2, 3}, {3}), from(V(6, 1), {2, 3}, DType::boolean), 0), Error);
}

}  // namespace
}  // namespace symmflow::kernels
