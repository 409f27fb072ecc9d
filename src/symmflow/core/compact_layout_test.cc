#include "symmflow/core/compact_layout.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "symmflow/core/strided_testing.h"

namespace symmflow {
namespace {

using testing::iota;

Tensor zeros(int64_t n, DType dtype = DType::i32) {
  Tensor t = Tensor::empty({n}, dtype);
  std::memset(t.data_ptr(), 0, size_t(t.nbytes()));
  return t;
}

std::vector<char> packed(const Tensor& t) {
  std::vector<char> out(size_t(t.nbytes()));
  pack(t, out.data());
  return out;
}

std::optional<CompactLayout> compact_of(const Tensor& t) { return compact_layout(t.sizes(), t.strides(), t.itemsize()); }

TEST(CompactLayout, RowsAndDenseTensorsAreOneRun) {
  EXPECT_EQ(compact_of(iota(48).as_strided({8, 6}, {6, 1}, 0))->dims(), 0);
  EXPECT_EQ(compact_of(iota(48).as_strided({1, 6}, {6, 1}, 42))->dims(), 0);  // the last row
  EXPECT_EQ(compact_layout(std::vector<int64_t>{8, 6}, std::vector<int64_t>{}, 4)->dims(), 0);
}

TEST(CompactLayout, ColumnIsOneDimWithTheRowStride) {
  auto c = compact_of(iota(48).as_strided({8, 1}, {6, 1}, 5));  // the last column of 8 x 6
  ASSERT_TRUE(c);
  EXPECT_EQ(c->dims(), 1);
  EXPECT_EQ(c->sizes[0], 8);
  EXPECT_EQ(c->strides[0], 6);
}

TEST(CompactLayout, TwoColumnsAndThreeDFacesFit) {
  auto band = compact_of(iota(40).as_strided({4, 2}, {10, 1}, 0));
  ASSERT_TRUE(band);
  EXPECT_EQ(band->dims(), 2);
  EXPECT_EQ(band->sizes[1], 2);
  EXPECT_EQ(band->strides[0], 10);
  // Faces of a [4, 5, 6] grid: x[:, 0, :] keeps two dims (sizes [4, 6],
  // strides [30, 1]); x[:, :, 0] (strides [30, 6]) coalesces to one, 20 x 6.
  auto face = compact_of(iota(120).as_strided({4, 6}, {30, 1}, 0));
  ASSERT_TRUE(face);
  EXPECT_EQ(face->dims(), 2);
  auto side = compact_of(iota(120).as_strided({4, 5}, {30, 6}, 0));
  ASSERT_TRUE(side);
  EXPECT_EQ(side->dims(), 1);
  EXPECT_EQ(side->sizes[0], 20);
  EXPECT_EQ(side->strides[0], 6);
}

TEST(CompactLayout, ThreeStridedDimsOrHugeStridesDoNotFit) {
  EXPECT_FALSE(compact_of(iota(64).as_strided({2, 2, 2}, {32, 8, 2}, 0)));
  EXPECT_FALSE(compact_of(iota(256).as_strided({2, 2, 2, 2}, {128, 32, 8, 2}, 0)));
  const std::vector<int64_t> sizes{2, 2}, strides{int64_t(1) << 33, 1};
  EXPECT_FALSE(compact_layout(sizes, strides, 4));
  // Dense with 2^33 elements is still one run (only strided dims are bounded).
  const std::vector<int64_t> big{int64_t(1) << 33}, one{1};
  EXPECT_EQ(compact_layout(big, one, 4)->dims(), 0);
}

TEST(CompactLayout, BandsOfA3DGridCoalesceToTwoDims) {
  // x[:, :, 0:2] and x[:, 0:2, :] of a [4, 5, 6] grid.
  auto last = compact_of(iota(120).as_strided({4, 5, 2}, {30, 6, 1}, 0));
  ASSERT_TRUE(last);
  EXPECT_EQ(last->dims(), 2);
  EXPECT_EQ(last->sizes[0], 20);
  auto middle = compact_of(iota(120).as_strided({4, 2, 6}, {30, 6, 1}, 0));
  ASSERT_TRUE(middle);
  EXPECT_EQ(middle->dims(), 2);
  EXPECT_EQ(middle->sizes[1], 12);
}

// P2P takes the compact form from the layout it already coalesced: the same
// answer as from sizes and strides, for every element size.
TEST(CompactLayout, FromACoalescedLayoutAsFromSizesAndStrides) {
  for (DType dt : {DType::i32, DType::f64, DType::bf16})
    for (const Tensor& t : {iota(48, dt).as_strided({8, 1}, {6, 1}, 5), iota(120, dt).as_strided({4, 5, 2}, {30, 6, 1}, 0),
                            iota(120, dt).as_strided({4, 6}, {30, 1}, 0), iota(64, dt).as_strided({2, 2, 2}, {32, 8, 2}, 0),
                            iota(48, dt).as_strided({8, 6}, {6, 1}, 0)}) {
      SCOPED_TRACE(t.type_string() + " strides " + shape_to_string(t.strides()));
      const auto a = compact_of(t), b = compact_layout(strided_layout(t));
      ASSERT_EQ(a.has_value(), b.has_value());
      if (!a) continue;
      EXPECT_EQ(a->dims(), b->dims());
      EXPECT_EQ(a->itemsize, b->itemsize);
      for (int d = 0; d < a->dims(); ++d) {
        EXPECT_EQ(a->sizes[d], b->sizes[d]);
        EXPECT_EQ(a->strides[d], b->strides[d]);
      }
    }
}

// What a peer does with the posted layout: copy_elements into the view the
// layout rebuilds (element 0 at the view's first element) gives the same
// elements as unpacking into the view itself.
void expect_put_lands(const Tensor& src, const Tensor& dst_view) {
  SCOPED_TRACE(src.type_string() + " -> " + dst_view.type_string() + " strides " + shape_to_string(dst_view.strides()));
  auto c = compact_of(dst_view);
  ASSERT_TRUE(c);
  const StridedLayout to = strided_layout(*c, static_cast<char*>(dst_view.data_ptr()), size_t(dst_view.nbytes()));
  copy_elements(to, strided_layout(src));
  EXPECT_EQ(packed(dst_view), packed(src));
}

TEST(CompactLayout, ColumnToColumnLandsInPlace) {
  Tensor grid = zeros(48);
  Tensor peer = iota(48);
  expect_put_lands(peer.as_strided({8, 1}, {6, 1}, 4), grid.as_strided({8, 1}, {6, 1}, 0));
  // The rest of the grid is untouched.
  int64_t nonzero = 0;
  for (int64_t i = 0; i < 48; ++i) nonzero += static_cast<int32_t*>(grid.data_ptr())[i] != 0;
  EXPECT_EQ(nonzero, 8);
}

TEST(CompactLayout, DifferentShapesOfTheSameCountLandInRowMajorOrder) {
  // A [3, 2] transposed view into a [2, 3] strided one: no common loop, the
  // stack buffer path; and one larger than the buffer (4 KiB) in chunks.
  expect_put_lands(iota(6).as_strided({3, 2}, {1, 3}, 0), zeros(20).as_strided({2, 3}, {10, 2}, 1));
  expect_put_lands(iota(3000).as_strided({1500, 2}, {1, 1500}, 0), zeros(9000).as_strided({2, 1500}, {4500, 3}, 0));
}

TEST(CompactLayout, EndsOfOtherElementSizesMoveTheSameBytes) {
  // The two ends of a message may be different dtypes of the same byte count
  // (dtypes are not compared): f32 elements into an f64 column, and back.
  expect_put_lands(iota(40).as_strided({4, 2}, {10, 1}, 0), zeros(24, DType::f64).as_strided({4}, {6}, 1));
  expect_put_lands(iota(24, DType::f64).as_strided({4}, {6}, 1), zeros(40).as_strided({4, 2}, {10, 1}, 2));
  // More than one 4 KiB chunk.
  expect_put_lands(iota(6000).as_strided({3000}, {2}, 0), zeros(9000, DType::f64).as_strided({1500}, {6}, 0));
}

TEST(CompactLayout, ContiguousEitherSideAndOtherItemSizes) {
  expect_put_lands(iota(8, DType::f64), zeros(32, DType::f64).as_strided({8}, {4}, 3));
  expect_put_lands(iota(40, DType::bf16).as_strided({4, 2}, {10, 1}, 0), zeros(8, DType::bf16));
  expect_put_lands(iota(40, DType::boolean).as_strided({8}, {5}, 0), zeros(80, DType::boolean).as_strided({8}, {10}, 9));
}

}  // namespace
}  // namespace symmflow
