#include <gtest/gtest.h>

#include "symmflow/core/ivalue.h"
#include "symmflow/core/overlap.h"
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

// views_share_bytes decides on geometry alone, exactly (passes/race_check).
TEST(Overlap, ViewsShareBytesExactly) {
  auto share = [](Shape sa, Shape ta, int64_t oa, Shape sb, Shape tb, int64_t ob, int64_t isz = 4) {
    return views_share_bytes({sa, ta, oa, isz}, {sb, tb, ob, isz});
  };
  // Rows of a [4, 8]: row 0 against rows 1..2 (the halo exchange), then row 1 against them.
  EXPECT_FALSE(share({8}, {1}, 0, {2, 8}, {8, 1}, 8));
  EXPECT_TRUE(share({8}, {1}, 8, {2, 8}, {8, 1}, 8));
  // Even and odd columns of a [4, 8] interleave without sharing; columns 0:2 and 1:3 share.
  EXPECT_FALSE(share({4, 4}, {8, 2}, 0, {4, 4}, {8, 2}, 1));
  EXPECT_TRUE(share({3, 2}, {4, 1}, 0, {3, 2}, {4, 1}, 1));
  // A column and a row meet in one element; a transposed square covers the square.
  EXPECT_TRUE(share({4}, {8}, 3, {8}, {1}, 16));
  EXPECT_FALSE(share({4}, {8}, 3, {3}, {1}, 16));
  EXPECT_TRUE(share({3, 3}, {1, 3}, 0, {3, 3}, {3, 1}, 0));
  // Negative strides, stride 0 (expand), empty views, mixed element sizes.
  EXPECT_TRUE(share({4}, {-1}, 3, {1}, {1}, 0));
  EXPECT_FALSE(share({4}, {-2}, 6, {4}, {2}, 1));
  EXPECT_TRUE(share({2, 3}, {0, 1}, 2, {1}, {1}, 4));
  EXPECT_FALSE(share({0}, {1}, 0, {8}, {1}, 0));
  EXPECT_TRUE(views_share_bytes({Shape{2}, Shape{1}, 1, 8}, {Shape{1}, Shape{1}, 3, 4}));   // f64 [8, 24) vs f32 [12, 16)
  EXPECT_FALSE(views_share_bytes({Shape{2}, Shape{2}, 0, 2}, {Shape{2}, Shape{2}, 1, 2}));  // even / odd bf16
  auto [lo, hi] = byte_extent({Shape{4}, Shape{-1}, 3, 4});
  EXPECT_EQ(lo, 0);
  EXPECT_EQ(hi, 16);
  auto x = Tensor::empty({8}, DType::f32);
  EXPECT_TRUE(views_share_bytes(geometry(x.as_strided({2}, {3}, 1)), geometry(x.as_strided({1}, {1}, 4))));
}

// The rows tile_reduce moves in place (runtime) and collective_lowering labels
// direct (compiler): one rule.
TEST(Overlap, RowsInPlaceAreRowsWithUnitInnerStrideThatDoNotOverlap) {
  const Shape rows{8, 4}, column{8}, one_column{8, 1};
  EXPECT_TRUE(rows_in_place(rows, Shape{6, 1}));       // 4 of 6 columns of a grid
  EXPECT_TRUE(rows_in_place(rows, Shape{4, 1}));       // contiguous
  EXPECT_FALSE(rows_in_place(rows, Shape{3, 1}));      // rows overlap
  EXPECT_FALSE(rows_in_place(rows, Shape{1, 8}));      // transposed
  EXPECT_TRUE(rows_in_place(one_column, Shape{6, 6}));  // one column: rows of one element
  EXPECT_TRUE(rows_in_place(Shape{1, 4}, Shape{99, 1}));
  EXPECT_FALSE(rows_in_place(column, Shape{6}));        // a 1-D column
  EXPECT_TRUE(rows_in_place(column, Shape{1}));
  EXPECT_TRUE(rows_in_place(Shape{2, 3, 4}, Shape{12, 4, 1}));
  EXPECT_FALSE(rows_in_place(Shape{2, 3, 4}, Shape{24, 4, 1}));  // 3-D, not one run
}

TEST(Overlap, PyTorchRules) {
  auto x = Tensor::empty({8}, DType::f32);
  auto a = x.as_strided({6}, {1}, 0), b = x.as_strided({6}, {1}, 2);  // x[0:6], x[2:8]
  EXPECT_EQ(overlap_status(a, b), Overlap::partial);
  EXPECT_EQ(overlap_status(a, x.as_strided({6}, {1}, 0)), Overlap::full);  // same geometry
  EXPECT_EQ(overlap_status(a, a), Overlap::full);
  EXPECT_EQ(overlap_status(x.as_strided({2}, {1}, 0), x.as_strided({2}, {1}, 2)), Overlap::no);
  EXPECT_EQ(overlap_status(a, Tensor::empty({6})), Overlap::no);          // other storage
  EXPECT_EQ(overlap_status(a, x.as_strided({0}, {1}, 0)), Overlap::no);   // empty
  EXPECT_EQ(overlap_status(a, x.as_strided({}, {}, 2)), Overlap::partial);  // one element inside
  // Square and its transpose: same bytes, other strides.
  auto sq = Tensor::empty({3, 3}, DType::f32);
  EXPECT_EQ(overlap_status(sq, sq.as_strided({3, 3}, {1, 3}, 0)), Overlap::partial);
  // Not dense (columns 0:2 and 1:3 of a 3x4): PyTorch does not decide.
  auto m = Tensor::empty({3, 4}, DType::f32);
  EXPECT_EQ(overlap_status(m.as_strided({3, 2}, {4, 1}, 0), m.as_strided({3, 2}, {4, 1}, 1)),
            Overlap::too_hard);
  EXPECT_TRUE(may_overlap(m.as_strided({3, 2}, {4, 1}, 0), m.as_strided({3, 2}, {4, 1}, 1)));
  EXPECT_FALSE(may_overlap(m.as_strided({2}, {1}, 0), m.as_strided({2}, {1}, 2)));
  // Meta tensors have no memory: they overlap nothing.
  EXPECT_EQ(overlap_status(Tensor::meta({4}, DType::f32), Tensor::meta({4}, DType::f32)), Overlap::no);

  EXPECT_TRUE(is_non_overlapping_and_dense(sq.as_strided({3, 3}, {1, 3}, 0)));  // a permutation
  EXPECT_TRUE(is_non_overlapping_and_dense(m.as_strided({1, 4}, {99, 1}, 0)));  // size-1 dim
  EXPECT_FALSE(is_non_overlapping_and_dense(m.as_strided({3, 2}, {4, 1}, 0)));
  EXPECT_EQ(internal_overlap(x.as_strided({2, 3}, {0, 1}, 0)), InternalOverlap::yes);  // expand
  EXPECT_EQ(internal_overlap(Tensor::meta({2, 3}, DType::f32, {0, 1})), InternalOverlap::yes);
  EXPECT_EQ(internal_overlap(x.as_strided({1, 3}, {0, 1}, 0)), InternalOverlap::no);  // size 1
  EXPECT_EQ(internal_overlap(x.as_strided({2, 3}, {1, 1}, 0)), InternalOverlap::too_hard);
  EXPECT_EQ(internal_overlap(x.as_strided({2, 0}, {0, 1}, 0)), InternalOverlap::no);  // empty

  auto message = [](auto&& fn) -> std::string {
    try {
      fn();
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(message([&] { assert_no_partial_overlap("add_", a, b); })
                .find("add_: unsupported operation: some elements of the input tensor and the "
                      "written-to tensor refer to a single memory location. Please clone() the "
                      "tensor before performing the operation."),
            std::string::npos);
  EXPECT_NE(message([&] { assert_no_internal_overlap("copy_", x.as_strided({2, 3}, {0, 1}, 0)); })
                .find("copy_: unsupported operation: more than one element of the written-to "
                      "tensor refers to a single memory location. Please clone() the tensor "
                      "before performing the operation."),
            std::string::npos);
  EXPECT_NO_THROW(assert_no_partial_overlap("add_", a, a));
  EXPECT_NO_THROW(assert_no_internal_overlap("add_", x.as_strided({2, 3}, {1, 1}, 0)));
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
