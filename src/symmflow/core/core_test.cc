#include <gtest/gtest.h>

#include "symmflow/core/ivalue.h"
#include "symmflow/core/tensor.h"

namespace symmflow {
namespace {

TEST(DType, PromoteAndNames) {
  EXPECT_EQ(promote_types(DType::i32, DType::i64), DType::i64);
  EXPECT_EQ(promote_types(DType::i64, DType::f16), DType::f16);
  EXPECT_EQ(promote_types(DType::bf16, DType::f16), DType::f32);
  EXPECT_EQ(promote_types(DType::boolean, DType::i32), DType::i32);
  EXPECT_EQ(promote_types(DType::f32, DType::f64), DType::f64);
  DType t;
  ASSERT_TRUE(parse_dtype("bfloat16", &t));
  EXPECT_EQ(t, DType::bf16);
  EXPECT_FALSE(parse_dtype("f8", &t));
  EXPECT_EQ(dtype_name(DType::boolean), "bool");
}

TEST(DType, HalfAndBFloat16RoundToNearestEven) {
  EXPECT_EQ(float(Half(1.0f)), 1.0f);
  EXPECT_EQ(Half(1.0f).bits, 0x3c00);
  EXPECT_EQ(Half(65504.0f).bits, 0x7bff);
  EXPECT_EQ(Half(65520.0f).bits, 0x7c00);              // rounds to inf
  EXPECT_EQ(Half(5.960464477539063e-08f).bits, 0x0001);  // smallest subnormal
  EXPECT_EQ(float(Half::to_float(0x0001)), 5.960464477539063e-08f);
  EXPECT_EQ(Half(1.0f + 1.0f / 2048).bits, 0x3c00);  // tie -> even
  EXPECT_EQ(Half(1.0f + 3.0f / 2048).bits, 0x3c02);  // tie -> even (up)
  EXPECT_EQ(BFloat16(1.0f).bits, 0x3f80);
  EXPECT_EQ(BFloat16(1.0f + 1.0f / 256).bits, 0x3f80);  // tie -> even
  EXPECT_EQ(BFloat16(1.0f + 3.0f / 256).bits, 0x3f82);
  EXPECT_EQ(float(BFloat16(-2.5f)), -2.5f);
  EXPECT_TRUE(std::isnan(float(BFloat16(NAN))));
  EXPECT_TRUE(std::isnan(float(Half(NAN))));
}

TEST(Shape, Broadcast) {
  EXPECT_EQ(broadcast_shapes(Shape{4, 1, 3}, Shape{5, 1}), (Shape{4, 5, 3}));
  EXPECT_THROW(broadcast_shapes(Shape{2, 3}, Shape{4}), Error);
  EXPECT_EQ(contiguous_strides(Shape{2, 3, 4}), (Shape{12, 4, 1}));
  EXPECT_EQ(wrap_dim(-1, 3), 2);
  EXPECT_THROW(wrap_dim(3, 3), Error);
}

TEST(Tensor, ViewsShareStorage) {
  auto t = Tensor::empty({2, 3}, DType::f32);
  for (int i = 0; i < 6; ++i) t.data<float>()[i] = float(i);
  auto row = t.as_strided({3}, {1}, 3);
  EXPECT_TRUE(row.shares_storage(t));
  EXPECT_FALSE(row.is_same(t));
  row.data<float>()[1] = 40.0f;
  EXPECT_EQ(t.data<float>()[4], 40.0f);
  auto col = t.as_strided({2}, {3}, 1);
  EXPECT_FALSE(col.is_contiguous());
  EXPECT_TRUE(row.is_contiguous());
  EXPECT_EQ(t.type_string(), "f32[2, 3]");
  EXPECT_THROW(t.as_strided({3}, {1}, 4), Error);  // runs past the storage
  EXPECT_THROW(t.data<double>(), Error);
}

TEST(Tensor, MetaHasNoData) {
  auto m = Tensor::meta({4, 8}, DType::bf16);
  EXPECT_TRUE(m.is_meta());
  EXPECT_EQ(m.strides(), (Shape{8, 1}));
  EXPECT_THROW(m.data_ptr(), Error);
}

TEST(Tensor, AllocatorGuardSwapsAllocator) {
  struct Counting : Allocator {
    int n = 0;
    std::shared_ptr<Storage> allocate(size_t nbytes) override {
      ++n;
      return regular_allocator().allocate(nbytes);
    }
  } counting;
  {
    AllocatorGuard g(counting);
    Tensor::empty({4});
  }
  Tensor::empty({4});
  EXPECT_EQ(counting.n, 1);
}

TEST(IValue, KindsAndErrors) {
  IValue l(std::vector<int64_t>{1, 2, 3});
  EXPECT_EQ(l.to_int_list(), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(IValue(3).to_double(), 3.0);
  EXPECT_EQ(IValue("sum").repr(), "\"sum\"");
  try {
    IValue("x").to_int();
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "expected an int, got str \"x\"");
  }
  EXPECT_TRUE(IValue(std::nullopt).is_none());
}

}  // namespace
}  // namespace symmflow
