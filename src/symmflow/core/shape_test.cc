// Size arithmetic: overflow is an Error naming the numbers, never a wrapped size.
#include "symmflow/core/shape.h"

#include <gtest/gtest.h>

#include "symmflow/core/checked.h"
#include "symmflow/core/tensor.h"

namespace symmflow {
namespace {

constexpr int64_t k2To32 = int64_t(1) << 32;

std::string error_of(auto&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(CheckedArithmetic, NamesTheComputationAndBothOperands) {
  EXPECT_EQ(checked_mul(int64_t(3), int64_t(4), "x"), 12);
  EXPECT_EQ(error_of([] { checked_mul(k2To32, k2To32 + 1, "repeat"); }),
            "repeat: 4294967296 * 4294967297 overflows a 64-bit integer (the largest is 9223372036854775807)");
  EXPECT_NE(error_of([] { checked_add(INT64_MAX, int64_t(1), [] { return std::string("cat"); }); })
                .find("cat: 9223372036854775807 + 1 overflows"),
            std::string::npos);
  EXPECT_THROW(checked_sub(INT64_MIN, int64_t(1), "x"), Error);
}

TEST(Shape, NumelRejectsShapeThatOverflowsInt64) {
  EXPECT_EQ(numel_of(Shape{k2To32, 2}), 2 * k2To32);
  // 2^32 * (2^32 + 1) wraps to 2^32 in int64: the shape, which then filled memory.
  const std::string e = error_of([] { numel_of(Shape{k2To32, k2To32 + 1}); });
  EXPECT_NE(e.find("shape [4294967296, 4294967297]"), std::string::npos) << e;
  EXPECT_NE(e.find("4294967296 * 4294967297 overflows"), std::string::npos) << e;
  // 2^64 wraps to 0: a tensor that claims its shape and holds nothing.
  EXPECT_THROW(numel_of(Shape{k2To32, k2To32}), Error);
}

TEST(Shape, NbytesCapsEveryTensorAtInt64Bytes) {
  EXPECT_EQ(nbytes_of(Shape{2, 3}, 4), 24);
  EXPECT_EQ(nbytes_of(Shape{int64_t(1) << 62}, 1), int64_t(1) << 62);
  // The elements fit, the bytes do not.
  const std::string e = error_of([] { nbytes_of(Shape{int64_t(1) << 62}, 4); });
  EXPECT_NE(e.find("with 4-byte elements"), std::string::npos) << e;
}

TEST(Shape, ContiguousStridesRejectOverflowEvenForAnEmptyShape) {
  EXPECT_EQ(contiguous_strides(Shape{0, 3, 4}), (Shape{12, 4, 1}));
  // No elements, but the strides themselves would wrap.
  EXPECT_THROW(contiguous_strides(Shape{0, k2To32, k2To32}), Error);
  // The outermost size scales no stride: this shape's strides fit.
  EXPECT_EQ(contiguous_strides(Shape{k2To32, 2}), (Shape{2, 1}));
}

TEST(Shape, HasContiguousStridesAgreesWithContiguousStridesWithoutBuildingThem) {
  for (const Shape& sizes : {Shape{}, Shape{5}, Shape{0, 3, 4}, Shape{2, 1, 3}, Shape{k2To32, 2}})
    EXPECT_TRUE(has_contiguous_strides(sizes, contiguous_strides(sizes))) << shape_to_string(sizes);
  EXPECT_FALSE(has_contiguous_strides(Shape{4, 4}, Shape{1, 4}));     // transposed
  EXPECT_FALSE(has_contiguous_strides(Shape{2, 1, 3}, Shape{3, 1, 1}));  // a size-1 dim's stride counts
  EXPECT_FALSE(has_contiguous_strides(Shape{4, 4}, Shape{4}));        // rank differs
  // contiguous_strides throws here; no stride list matches.
  EXPECT_FALSE(has_contiguous_strides(Shape{0, k2To32, k2To32}, Shape{0, k2To32, 1}));
}

TEST(Shape, StorageExtentIsCheckedAndZeroForEmptyViews) {
  EXPECT_EQ(storage_extent(Shape{4, 4}, Shape{4, 1}, 4), 20);
  EXPECT_EQ(storage_extent(Shape{0, 4}, Shape{4, 1}, 7), 0);
  EXPECT_THROW(storage_extent(Shape{2, 2}, Shape{int64_t(1) << 62, INT64_MAX}, 0), Error);
}

TEST(Tensor, MetaTensorPastTheByteCapIsAnError) {
  EXPECT_THROW(Tensor::meta({k2To32, k2To32}, DType::f32), Error);
  EXPECT_THROW(Tensor::meta({int64_t(1) << 62}, DType::f32), Error);
  EXPECT_EQ(Tensor::meta({int64_t(1) << 60}, DType::f32).nbytes(), size_t(1) << 62);
}

TEST(Tensor, EmptyPastTheByteCapFailsBeforeAllocating) {
  const std::string e = error_of([] { Tensor::empty({k2To32, k2To32 + 1}, DType::f32); });
  EXPECT_NE(e.find("4294967296 * 4294967297 overflows"), std::string::npos) << e;
}

}  // namespace
}  // namespace symmflow
