#include "symmflow/kernels/embedding.h"

#include <gtest/gtest.h>

#include "symmflow/kernels/kernel_testing.h"
#include "symmflow/kernels/views.h"

namespace symmflow::kernels {
namespace {

using testing::from;
using testing::iota;
using testing::values;
using V = std::vector<double>;

TEST(Embedding, GathersRows) {
  Tensor w = iota({4, 3});  // row r = [3r, 3r+1, 3r+2]
  Tensor ids = from({3, 0, 3, 1}, {2, 2}, DType::i64);
  Tensor e = embedding(w, ids);
  EXPECT_EQ(e.sizes(), (Shape{2, 2, 3}));
  EXPECT_EQ(values(e), V({9, 10, 11, 0, 1, 2, 9, 10, 11, 3, 4, 5}));
  EXPECT_FALSE(e.shares_storage(w));
  // i32 indices, a 0-dim index, a transposed weight, bf16 rows copied bit for bit.
  EXPECT_EQ(values(embedding(w, from({2}, {}, DType::i32))), V({6, 7, 8}));
  EXPECT_EQ(values(embedding(transpose(iota({3, 4}), 0, 1), from({1}, {1}, DType::i64))), V({1, 5, 9}));
  EXPECT_EQ(embedding(iota({4, 3}, DType::bf16), ids).dtype(), DType::bf16);
  EXPECT_EQ(embedding(w, Tensor::empty({0}, DType::i64)).sizes(), (Shape{0, 3}));
}

TEST(Embedding, Errors) {
  Tensor w = iota({4, 3});
  EXPECT_THROW(embedding(w, from({4}, {1}, DType::i64)), Error);   // out of range
  EXPECT_THROW(embedding(w, from({-1}, {1}, DType::i64)), Error);  // negative: not from the end
  EXPECT_THROW(embedding(w, from({1}, {1}, DType::f32)), Error);   // float indices
  EXPECT_THROW(embedding(iota({4}), from({1}, {1}, DType::i64)), Error);  // 1-D weight
  Tensor m = embedding(Tensor::meta({10, 8}, DType::f32), Tensor::meta({2, 5}, DType::i64));
  EXPECT_TRUE(m.is_meta());
  EXPECT_EQ(m.sizes(), (Shape{2, 5, 8}));
  EXPECT_THROW(embedding(Tensor::meta({10, 8}, DType::f32), Tensor::meta({2}, DType::f32)), Error);
}

}  // namespace
}  // namespace symmflow::kernels
