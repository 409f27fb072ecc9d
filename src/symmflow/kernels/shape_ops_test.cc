#include "symmflow/kernels/shape_ops.h"

#include <gtest/gtest.h>

#include "symmflow/kernels/copy.h"
#include "symmflow/kernels/views.h"
#include "symmflow/kernels/kernel_testing.h"

namespace symmflow::kernels {
namespace {

using testing::from;
using testing::values;

const DType kAll[] = {DType::f32, DType::f64, DType::bf16, DType::f16,
                      DType::i32, DType::i64, DType::boolean};

TEST(ShapeOps, CatAlongEachDim) {
  Tensor a = from({1, 2, 3, 4}, {2, 2}), b = from({5, 6}, {2, 1});
  Tensor c1 = cat({a, b}, 1);
  EXPECT_EQ(c1.sizes(), (Shape{2, 3}));
  EXPECT_EQ(values(c1), (std::vector<double>{1, 2, 5, 3, 4, 6}));
  Tensor c0 = cat({a, from({7, 8}, {1, 2}), a}, 0);
  EXPECT_EQ(c0.sizes(), (Shape{5, 2}));
  EXPECT_EQ(values(c0), (std::vector<double>{1, 2, 3, 4, 7, 8, 1, 2, 3, 4}));
  EXPECT_EQ(values(cat({a, b}, -1)), values(c1));
  EXPECT_FALSE(cat({a}, 0).shares_storage(a));  // always a new tensor
  // Non-contiguous inputs.
  EXPECT_EQ(values(cat({transpose(a, 0, 1), a}, 1)), (std::vector<double>{1, 3, 1, 2, 2, 4, 3, 4}));
}

TEST(ShapeOps, CatEveryDTypeAndPromotion) {
  for (DType dt : kAll) {
    Tensor c = cat({from({0, 1}, {2}, dt), from({1}, {1}, dt)});
    EXPECT_EQ(c.dtype(), dt);
    EXPECT_EQ(values(c), (std::vector<double>{0, 1, 1})) << dtype_name(dt);
  }
  Tensor c = cat({from({1, 2}, {2}, DType::i32), from({2.5}, {1}, DType::f32)});
  EXPECT_EQ(c.dtype(), DType::f32);
  EXPECT_EQ(values(c), (std::vector<double>{1, 2, 2.5}));
  EXPECT_EQ(cat({from({1}, {1}, DType::bf16), from({1}, {1}, DType::f16)}).dtype(), DType::f32);
  EXPECT_EQ(cat({from({1}, {1}, DType::boolean), from({3}, {1}, DType::i64)}).dtype(), DType::i64);
}

TEST(ShapeOps, CatSkipsEmpty1D) {
  Tensor a = from({1, 2, 3, 4}, {2, 2});
  Tensor e = Tensor::empty({0}, DType::f64);
  Tensor c = cat({e, a, e}, 1);
  EXPECT_EQ(c.sizes(), (Shape{2, 2}));
  EXPECT_EQ(c.dtype(), DType::f64);  // promotion still counts it
  EXPECT_EQ(values(c), (std::vector<double>{1, 2, 3, 4}));
  Tensor only = cat({e, Tensor::empty({0})});
  EXPECT_EQ(only.sizes(), (Shape{0}));
  // A [2, 0] tensor is not skipped: it must agree on the other dims.
  EXPECT_EQ(cat({a, Tensor::empty({2, 0})}, 1).sizes(), (Shape{2, 2}));
  EXPECT_THROW(cat({a, Tensor::empty({3, 0})}, 1), Error);
}

TEST(ShapeOps, CatErrors) {
  Tensor a = from({1, 2, 3, 4}, {2, 2});
  EXPECT_THROW(cat({}, 0), Error);
  EXPECT_THROW(cat({a, from({1, 2, 3}, {3})}, 0), Error);    // ndim differs
  EXPECT_THROW(cat({a, from({1, 2, 3}, {1, 3})}, 0), Error);  // dim 1 differs
  EXPECT_THROW(cat({a, a}, 2), Error);
  EXPECT_THROW(cat({from({1}, {})}, 0), Error);  // 0-d
  try {
    cat({a, from({1, 2, 3}, {1, 3})}, 0);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("except in dimension 0"), std::string::npos) << e.what();
  }
}

TEST(ShapeOps, Stack) {
  Tensor a = from({1, 2, 3}, {3}), b = from({4, 5, 6}, {3});
  Tensor s0 = stack({a, b});
  EXPECT_EQ(s0.sizes(), (Shape{2, 3}));
  EXPECT_EQ(values(s0), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  Tensor s1 = stack({a, b}, 1);
  EXPECT_EQ(s1.sizes(), (Shape{3, 2}));
  EXPECT_EQ(values(s1), (std::vector<double>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(values(stack({a, b}, -1)), values(s1));
  Tensor s = stack({from({1}, {}), from({2}, {})});
  EXPECT_EQ(s.sizes(), (Shape{2}));
  for (DType dt : kAll) {
    Tensor st = stack({from({1, 0}, {2}, dt), from({0, 1}, {2}, dt)}, 1);
    EXPECT_EQ(st.dtype(), dt);
    EXPECT_EQ(values(st), (std::vector<double>{1, 0, 0, 1})) << dtype_name(dt);
  }
  EXPECT_EQ(stack({a, from({1, 2, 3}, {3}, DType::f64)}).dtype(), DType::f64);
  EXPECT_THROW(stack({}), Error);
  EXPECT_THROW(stack({a, from({1, 2}, {2})}), Error);
  EXPECT_THROW(stack({a, b}, 2), Error);
  EXPECT_THROW(stack({a, b}, -3), Error);
}

TEST(ShapeOps, MetaGivesMeta) {
  Tensor m = Tensor::meta({2, 3}, DType::bf16);
  Tensor c = cat({m, from({1, 2}, {2, 1})}, 1);
  EXPECT_TRUE(c.is_meta());
  EXPECT_EQ(c.sizes(), (Shape{2, 4}));
  EXPECT_EQ(c.dtype(), DType::f32);
  Tensor s = stack({m, m, m}, 1);
  EXPECT_TRUE(s.is_meta());
  EXPECT_EQ(s.sizes(), (Shape{2, 3, 3}));
  EXPECT_THROW(cat({m, Tensor::meta({3, 3}, DType::bf16)}, 1), Error);
  EXPECT_THROW(stack({m, Tensor::meta({3, 2}, DType::bf16)}), Error);
}

TEST(ShapeOps, RepeatFlipRoll) {
  using V = std::vector<double>;
  Tensor x = testing::iota({2, 3});  // [[0, 1, 2], [3, 4, 5]]
  Tensor r = repeat(x, {2, 1});
  EXPECT_EQ(r.sizes(), (Shape{4, 3}));
  EXPECT_EQ(values(r), V({0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(values(repeat(testing::iota({2}), {2, 2})), V({0, 1, 0, 1, 0, 1, 0, 1}));
  EXPECT_FALSE(repeat(x, {1, 1}).shares_storage(x));
  EXPECT_EQ(repeat(x, {0, 2}).sizes(), (Shape{0, 6}));
  EXPECT_THROW(repeat(x, {2}), Error);
  EXPECT_THROW(repeat(x, {1, -1}), Error);
  EXPECT_EQ(values(flip(x, {1})), V({2, 1, 0, 5, 4, 3}));
  EXPECT_EQ(values(flip(x, {0, -1})), V({5, 4, 3, 2, 1, 0}));
  EXPECT_FALSE(flip(x, {}).shares_storage(x));
  EXPECT_THROW(flip(x, {0, -2}), Error);
  EXPECT_EQ(values(roll(x, {1}, {1})), V({2, 0, 1, 5, 3, 4}));
  EXPECT_EQ(values(roll(x, {-4}, {1})), V({1, 2, 0, 4, 5, 3}));
  EXPECT_EQ(values(roll(x, {2})), V({4, 5, 0, 1, 2, 3}));  // flattened
  EXPECT_EQ(values(roll(transpose(x, 0, 1), {1}, {0})), V({2, 5, 0, 3, 1, 4}));
  EXPECT_THROW(roll(x, {1}, {0, 1}), Error);
  EXPECT_EQ(roll(Tensor::meta({2, 3}, DType::bf16), {1}, {0}).sizes(), (Shape{2, 3}));
  EXPECT_EQ(repeat(Tensor::meta({3}, DType::i32), {2, 2}).sizes(), (Shape{2, 6}));
}

TEST(ShapeOps, ConstantPadNd) {
  using V = std::vector<double>;
  Tensor x = testing::iota({2, 3});  // [[0, 1, 2], [3, 4, 5]]
  Tensor p = constant_pad_nd(x, {1, 2});
  EXPECT_EQ(p.sizes(), (Shape{2, 6}));
  EXPECT_EQ(values(p), V({0, 0, 1, 2, 0, 0, 0, 3, 4, 5, 0, 0}));
  EXPECT_EQ(values(constant_pad_nd(x, {-1, 1, 1, 0}, 7.5)), V({7.5, 7.5, 7.5, 1, 2, 7.5, 4, 5, 7.5}));
  EXPECT_EQ(constant_pad_nd(x, {-3, 0}).sizes(), (Shape{2, 0}));
  EXPECT_EQ(values(constant_pad_nd(from({1, 2}, {2}, DType::i32), {1, 0}, 2.7)), V({2, 1, 2}));
  EXPECT_FALSE(constant_pad_nd(x, {}).shares_storage(x));
  EXPECT_THROW(constant_pad_nd(x, {1}), Error);
  EXPECT_THROW(constant_pad_nd(x, {1, 1, 1, 1, 1, 1}), Error);
  EXPECT_THROW(constant_pad_nd(x, {-2, -2}), Error);
  EXPECT_THROW(constant_pad_nd(from({1}, {1}, DType::i32), {1, 1}, NAN), Error);
  EXPECT_EQ(constant_pad_nd(Tensor::meta({2, 3}, DType::f16), {1, 1, 2, 2}).sizes(), (Shape{6, 5}));
}

// Sizes computed from other sizes (issue 20): overflow is an Error naming the op,
// where it wrapped before (to 0: a result that claims to be empty).
TEST(ShapeOps, SizesThatOverflowInt64AreErrorsNamingTheOp) {
  const Tensor big = Tensor::meta({int64_t(1) << 62}, DType::boolean);
  EXPECT_THROW(
      {
        try {
          cat({big, big, big, big});
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("cat: the size of dimension 0"), std::string::npos) << e.what();
          throw;
        }
      },
      Error);
  const Tensor row = Tensor::meta({int64_t(1) << 32}, DType::boolean);
  EXPECT_THROW(
      {
        try {
          repeat(row, {int64_t(1) << 32});
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("repeat: dimension 0 of the result: 4294967296 * 4294967296"),
                    std::string::npos)
              << e.what();
          throw;
        }
      },
      Error);
  EXPECT_THROW(constant_pad_nd(from({1, 2}, {2}), {INT64_MAX, 1}), Error);
  // A shift near the int64 limits rolls like any other: -2^63 = 1 (mod 3), as in PyTorch.
  EXPECT_EQ(values(roll(from({1, 2, 3}, {3}), {INT64_MIN})), (std::vector<double>{3, 1, 2}));
}

}  // namespace
}  // namespace symmflow::kernels
