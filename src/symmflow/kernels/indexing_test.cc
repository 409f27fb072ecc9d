#include "symmflow/kernels/indexing.h"

#include <gtest/gtest.h>

#include "symmflow/kernels/kernel_testing.h"
#include "symmflow/kernels/views.h"

namespace symmflow::kernels {
namespace {

using testing::from;
using testing::iota;
using testing::values;
using V = std::vector<double>;

Tensor ids(std::vector<double> v, Shape shape, DType dt = DType::i64) { return from(v, shape, dt); }

TEST(Indexing, IndexSelectAlongAnyDim) {
  Tensor x = iota({3, 4});  // row r = [4r .. 4r+3]
  EXPECT_EQ(values(index_select(x, 0, ids({2, 0, 2}, {3}))), V({8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11}));
  Tensor c = index_select(x, -1, ids({3, 1}, {2}, DType::i32));
  EXPECT_EQ(c.sizes(), (Shape{3, 2}));
  EXPECT_EQ(values(c), V({3, 1, 7, 5, 11, 9}));
  EXPECT_EQ(index_select(x, 1, ids({2}, {})).sizes(), (Shape{3, 1}));  // a 0-dim index: size 1
  EXPECT_EQ(values(index_select(transpose(x, 0, 1), 0, ids({1}, {1}))), V({1, 5, 9}));
  EXPECT_EQ(index_select(x, 0, ids({}, {0})).sizes(), (Shape{0, 4}));
  EXPECT_THROW(index_select(x, 0, ids({3}, {1})), Error);   // out of range
  EXPECT_THROW(index_select(x, 0, ids({-1}, {1})), Error);  // no wrapping
  EXPECT_THROW(index_select(x, 0, ids({0}, {1, 1})), Error);
  EXPECT_THROW(index_select(x, 0, from({0}, {1})), Error);  // float index
  EXPECT_EQ(index_select(Tensor::meta({5, 2}, DType::bf16), 0, ids({1, 1}, {2})).sizes(), (Shape{2, 2}));
}

TEST(Indexing, AdvancedIndexWithIntegerTensors) {
  Tensor x = iota({2, 3, 4});
  // x[idx]: the index's shape replaces dim 0; negatives count from the end.
  Tensor a = index(x, {ids({1, -2}, {2, 1})});
  EXPECT_EQ(a.sizes(), (Shape{2, 1, 3, 4}));
  EXPECT_EQ(values(a)[0], 12);
  EXPECT_EQ(values(a)[12], 0);
  // x[:, idx]: None keeps dim 0.
  Tensor b = index(x, {std::nullopt, ids({2}, {1})});
  EXPECT_EQ(b.sizes(), (Shape{2, 1, 4}));
  EXPECT_EQ(values(b), V({8, 9, 10, 11, 20, 21, 22, 23}));
  // x[i, j] (adjacent, broadcast): one element row per pair.
  Tensor c = index(x, {ids({0, 1}, {2}), ids({2}, {1})});
  EXPECT_EQ(c.sizes(), (Shape{2, 4}));
  EXPECT_EQ(values(c), V({8, 9, 10, 11, 20, 21, 22, 23}));
  // x[i, :, k] (not adjacent): the broadcast dims go first.
  Tensor d = index(x, {ids({1, 0}, {2}), std::nullopt, ids({3, 0}, {2})});
  EXPECT_EQ(d.sizes(), (Shape{2, 3}));
  EXPECT_EQ(values(d), V({15, 19, 23, 0, 4, 8}));
  EXPECT_THROW(index(x, {ids({2}, {1})}), Error);                          // out of range
  EXPECT_THROW(index(x, {from({1, 0}, {2}, DType::boolean)}), Error);      // masks refused
  EXPECT_THROW(index(x, {ids({0}, {1}, DType::i32)}), Error);               // i64 only
  EXPECT_THROW(index(x, {ids({0}, {2}), ids({0, 0, 0}, {3})}), Error);      // no broadcast
  EXPECT_THROW(index(iota({2}), {std::nullopt, ids({0}, {1})}), Error);     // too many
  EXPECT_EQ(index(Tensor::meta({5, 6}, DType::f16), {std::nullopt, ids({0, 1, 2}, {3})}).sizes(), (Shape{5, 3}));
}

TEST(Indexing, GatherPerElement) {
  Tensor x = iota({2, 3});  // [[0, 1, 2], [3, 4, 5]]
  EXPECT_EQ(values(gather(x, 1, ids({2, 0, 1, 1}, {2, 2}))), V({2, 0, 4, 4}));
  EXPECT_EQ(values(gather(x, 0, ids({1, 0, 1}, {1, 3}))), V({3, 1, 5}));
  EXPECT_EQ(values(gather(transpose(x, 0, 1), 1, ids({1, 0, 0}, {3, 1}))), V({3, 1, 2}));
  EXPECT_EQ(gather(from({7}, {}), 0, ids({0}, {})).item(), 7);
  EXPECT_THROW(gather(x, 1, ids({3}, {1, 1})), Error);         // out of range
  EXPECT_THROW(gather(x, 1, ids({-1}, {1, 1})), Error);
  EXPECT_THROW(gather(x, 1, ids({0, 0, 0}, {3, 1})), Error);   // 3 > 2 rows outside dim
  EXPECT_THROW(gather(x, 1, ids({0}, {1})), Error);            // dims differ
  EXPECT_THROW(gather(x, 1, ids({0}, {1, 1}, DType::i32)), Error);
  EXPECT_TRUE(gather(Tensor::meta({2, 3}, DType::f32), 0, ids({0}, {1, 1})).is_meta());
}

}  // namespace
}  // namespace symmflow::kernels
