#include "symmflow/core/strided.h"

#include <gtest/gtest.h>

#include <numeric>

#include "symmflow/core/strided_testing.h"

namespace symmflow {
namespace {

using testing::iota;

// Row-major element-by-element reference: each element's bytes, in order.
std::vector<char> reference_pack(const Tensor& t) {
  std::vector<char> out;
  const size_t isz = t.itemsize();
  std::vector<int64_t> idx(size_t(t.dim()), 0);
  for (int64_t e = 0; e < t.numel(); ++e) {
    int64_t off = 0;
    for (int64_t d = 0; d < t.dim(); ++d) off += idx[size_t(d)] * t.stride(d);
    const char* p = static_cast<const char*>(t.data_ptr()) + off * int64_t(isz);
    out.insert(out.end(), p, p + isz);
    for (int64_t d = t.dim(); d-- > 0;) {
      if (++idx[size_t(d)] < t.size(d)) break;
      idx[size_t(d)] = 0;
    }
  }
  return out;
}

struct RunSeen {
  int64_t offset, stride, n;
  bool operator==(const RunSeen&) const = default;
};

std::vector<RunSeen> runs_of(const Tensor& t, int64_t first = 0, int64_t count = -1) {
  StridedLayout l = strided_layout(t);
  std::vector<RunSeen> runs;
  for_each_run_range(l.loop, first, count < 0 ? l.numel() : count,
                     [&](const std::array<int64_t, 1>& off, const int64_t* s, int64_t n) {
                       runs.push_back({off[0], s[0], n});
                     });
  return runs;
}

void expect_round_trip(const Tensor& view) {
  SCOPED_TRACE(view.type_string() + " strides " + shape_to_string(view.strides()));
  const std::vector<char> want = reference_pack(view);
  std::vector<char> packed(view.nbytes(), 0);
  pack(view, packed.data());
  EXPECT_EQ(packed, want);
  // unpack into a zeroed copy of the same geometry gives the view's values back.
  Tensor other = Tensor::empty({int64_t(view.storage()->nbytes() / view.itemsize())}, view.dtype());
  std::memset(other.data_ptr(), 0, size_t(other.nbytes()));
  Tensor twin = other.as_strided(view.sizes(), view.strides(), view.storage_offset());
  unpack(packed.data(), twin);
  EXPECT_EQ(reference_pack(twin), want);
  // Element ranges, in uneven chunks, give the same bytes.
  const StridedLayout l = strided_layout(view);
  std::vector<char> chunked(view.nbytes(), 0);
  for (int64_t first = 0; first < view.numel(); first += 5) {
    const int64_t count = std::min<int64_t>(5, view.numel() - first);
    pack_elements(l, first, count, chunked.data() + first * int64_t(view.itemsize()));
  }
  EXPECT_EQ(chunked, want);
}

TEST(Strided, ContiguousIsOneRun) {
  Tensor t = iota(24).as_strided({2, 3, 4}, {12, 4, 1}, 0);
  EXPECT_EQ(runs_of(t), (std::vector<RunSeen>{{0, 4, 24}}));
  EXPECT_TRUE(strided_layout(t).contiguous());
  expect_round_trip(t);
}

TEST(Strided, SizeOneDimsAreDropped) {
  Tensor t = iota(6).as_strided({1, 2, 1, 3}, {99, 3, 7, 1}, 0);
  EXPECT_EQ(runs_of(t), (std::vector<RunSeen>{{0, 4, 6}}));
  Tensor scalar = iota(4).as_strided({}, {}, 2);
  EXPECT_EQ(runs_of(scalar), (std::vector<RunSeen>{{0, 0, 1}}));
  expect_round_trip(t);
  expect_round_trip(scalar);
}

TEST(Strided, RowSliceIsOneRunPerRow) {
  Tensor t = iota(40).as_strided({3, 4}, {10, 1}, 2);  // x[:, 2:6] of a [4, 10]
  EXPECT_EQ(runs_of(t), (std::vector<RunSeen>{{0, 4, 4}, {40, 4, 4}, {80, 4, 4}}));
  EXPECT_FALSE(strided_layout(t).contiguous());
  expect_round_trip(t);
}

TEST(Strided, OuterDimsMergeWhenContiguous) {
  // [2, 3, 4] with the last dim sliced 4 of 5: dims 0 and 1 merge (15 == 5 * 3).
  Tensor t = iota(30).as_strided({2, 3, 4}, {15, 5, 1}, 0);
  const StridedLayout l = strided_layout(t);
  EXPECT_EQ(l.loop.sizes, (std::vector<int64_t>{6, 4}));
  EXPECT_EQ(l.loop.strides[0], (std::vector<int64_t>{20, 4}));
  expect_round_trip(t);
}

TEST(Strided, TransposedAndStepped) {
  expect_round_trip(iota(12).as_strided({4, 3}, {1, 4}, 0));        // transpose
  expect_round_trip(iota(30).as_strided({3, 4}, {10, 2}, 1));       // x[:, 1::2]
  expect_round_trip(iota(60).as_strided({2, 3, 2}, {30, 1, 9}, 3));  // permuted, offset
  expect_round_trip(iota(8, DType::f64).as_strided({4}, {2}, 0));    // 8-byte items
  expect_round_trip(iota(8, DType::bf16).as_strided({2, 2}, {1, 4}, 0));
  expect_round_trip(iota(9, DType::boolean).as_strided({3}, {3}, 0));
}

TEST(Strided, BroadcastStrideZero) {
  Tensor t = iota(3).as_strided({4, 3}, {0, 1}, 0);  // expand([4, 3])
  EXPECT_EQ(runs_of(t), (std::vector<RunSeen>{{0, 4, 3}, {0, 4, 3}, {0, 4, 3}, {0, 4, 3}}));
  std::vector<char> packed(t.nbytes());
  pack(t, packed.data());
  EXPECT_EQ(packed, reference_pack(t));
}

TEST(Strided, ZeroSizeVisitsNothing) {
  Tensor t = iota(6).as_strided({2, 0, 3}, {3, 3, 1}, 0);
  EXPECT_TRUE(runs_of(t).empty());
  pack(t, nullptr);
  unpack(nullptr, t);
  pack_elements(strided_layout(t), 0, 0, nullptr);
}

TEST(Strided, RangeStartsMidRow) {
  Tensor t = iota(40).as_strided({3, 4}, {10, 1}, 0);
  EXPECT_EQ(runs_of(t, 2, 7), (std::vector<RunSeen>{{8, 4, 2}, {40, 4, 4}, {80, 4, 1}}));
  EXPECT_EQ(runs_of(t, 11, 1), (std::vector<RunSeen>{{92, 4, 1}}));
}

TEST(Strided, InPlacePackCopiesNothing) {
  Tensor t = iota(6);
  int copies = 0;
  auto counting = [&](void* d, const void* s, size_t n) { ++copies, std::memcpy(d, s, n); };
  pack(t, t.data_ptr(), counting);
  unpack(t.data_ptr(), t, counting);
  EXPECT_EQ(copies, 0);
  std::vector<char> out(t.nbytes());
  pack(t, out.data(), counting);
  EXPECT_EQ(copies, 1);
}

TEST(Strided, MultiOperandLoopCoalescesOnlyWhenAllAgree) {
  // out dense [2, 3], in transposed: nothing merges, 2 runs of 3.
  std::vector<int64_t> shape{2, 3};
  std::array<std::vector<int64_t>, 2> strides{std::vector<int64_t>{12, 4}, std::vector<int64_t>{4, 8}};
  std::vector<std::array<int64_t, 3>> seen;
  std::vector<char> memory(256);
  char* base = memory.data();
  for_each_run<2>(shape, {base, base + 100}, strides, [&](char** p, const int64_t* s, int64_t n) {
    EXPECT_EQ(s[0], 4);
    EXPECT_EQ(s[1], 8);
    seen.push_back({p[0] - base, p[1] - base, n});
  });
  EXPECT_EQ(seen, (std::vector<std::array<int64_t, 3>>{{0, 100, 3}, {12, 104, 3}}));
}

}  // namespace
}  // namespace symmflow
