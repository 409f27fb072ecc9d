#include "symmflow/kernels/views.h"

#include <gtest/gtest.h>

#include "symmflow/kernels/copy.h"
#include "symmflow/kernels/kernel_testing.h"

namespace symmflow::kernels {
namespace {

using testing::values;

using testing::iota;

// The elements of t in row-major logical order, as doubles.
void expect_geometry(const Tensor& t, Shape sizes, Shape strides, int64_t offset) {
  EXPECT_EQ(t.sizes(), sizes);
  EXPECT_EQ(t.strides(), strides);
  EXPECT_EQ(t.storage_offset(), offset);
}

TEST(Views, ViewInfersAndShares) {
  Tensor a = iota({2, 6});
  Tensor v = view(a, {3, -1});
  expect_geometry(v, {3, 4}, {4, 1}, 0);
  EXPECT_TRUE(v.shares_storage(a));
  v.data<float>()[5] = 100.f;
  EXPECT_EQ(a.data<float>()[5], 100.f);
  expect_geometry(view(a, {12}), {12}, {1}, 0);
  expect_geometry(view(a, {1, 2, 1, 6}), {1, 2, 1, 6}, {12, 6, 6, 1}, 0);
  expect_geometry(view(iota({1}), {}), {}, {}, 0);
}

TEST(Views, ViewErrors) {
  Tensor a = iota({4, 4});
  try {
    view(a, {3, 5});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("shape [3, 5] is invalid for input of size 16"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(view(a, {-1, -1}), Error);
  EXPECT_THROW(view(a, {-1, 3}), Error);
  EXPECT_THROW(view(a, {-2, -8}), Error);
  // A transposed tensor cannot be flattened without a copy.
  Tensor at = transpose(a, 0, 1);
  EXPECT_THROW(view(at, {16}), Error);
  // ... but splitting a dim of it can.
  expect_geometry(view(at, {2, 2, 4}), {2, 2, 4}, {2, 1, 4}, 0);
  // Three of four columns: rows cannot merge. Every other column: they can
  // (row stride 4 = 2 columns x stride 2).
  EXPECT_THROW(view(slice(a, 1, 0, 3), {12}), Error);
  expect_geometry(view(slice(a, 1, 0, {}, 2), {8}), {8}, {2}, 0);
}

TEST(Views, ViewOfNonContiguousSplitsAndMerges) {
  Tensor a = iota({4, 6});
  Tensor s = slice(a, 0, 1, 3);  // rows 1, 2: contiguous block at offset 6
  expect_geometry(view(s, {12}), {12}, {1}, 6);
  Tensor c = slice(a, 1, 0, 3);  // [4, 3] strides [6, 1]
  expect_geometry(view(c, {2, 2, 3}), {2, 2, 3}, {12, 6, 1}, 0);
  EXPECT_THROW(view(c, {12}), Error);
  Tensor e = expand(iota({3, 1}), {3, 4});  // strides [1, 0]
  expect_geometry(view(e, {3, 2, 2}), {3, 2, 2}, {1, 0, 0}, 0);
}

TEST(Views, ReshapeViewsOrCopies) {
  Tensor a = iota({2, 3});
  Tensor r = reshape(a, {3, 2});
  EXPECT_TRUE(r.shares_storage(a));
  Tensor at = transpose(a, 0, 1);  // [3, 2] values 0 3 1 4 2 5
  Tensor f = reshape(at, {-1});
  EXPECT_FALSE(f.shares_storage(a));
  EXPECT_TRUE(f.is_contiguous());
  EXPECT_EQ(values(f), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  Tensor f2 = flatten(at);
  EXPECT_EQ(values(f2), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  Tensor b = iota({2, 3, 4});
  expect_geometry(flatten(b, 1), {2, 12}, {12, 1}, 0);
  expect_geometry(flatten(b, 0, 1), {6, 4}, {4, 1}, 0);
  expect_geometry(flatten(iota({}), 0), {1}, {1}, 0);
  EXPECT_THROW(flatten(b, 2, 1), Error);
}

TEST(Views, SliceClampsAndSteps) {
  Tensor a = iota({10});
  EXPECT_EQ(values(slice(a, 0, 1, 8, 2)), (std::vector<double>{1, 3, 5, 7}));
  EXPECT_EQ(values(slice(a, 0, -4, -1)), (std::vector<double>{6, 7, 8}));
  EXPECT_EQ(values(slice(a, 0, -100, 3)), (std::vector<double>{0, 1, 2}));
  EXPECT_EQ(values(slice(a, 0, 7, 100)), (std::vector<double>{7, 8, 9}));
  EXPECT_EQ(values(slice(a, 0, {}, {}, 3)), (std::vector<double>{0, 3, 6, 9}));
  EXPECT_EQ(values(slice(a, 0, -3, {}, 2)), (std::vector<double>{7, 9}));
  EXPECT_EQ(slice(a, 0, 8, 2).numel(), 0);
  EXPECT_EQ(slice(a, 0, 20, 30).numel(), 0);
  EXPECT_THROW(slice(a, 0, 0, 5, 0), Error);
  EXPECT_THROW(slice(a, 0, 0, 5, -1), Error);
  EXPECT_THROW(slice(a, 1), Error);
  EXPECT_THROW(slice(iota({}), 0), Error);
  Tensor m = iota({3, 4});
  Tensor s = slice(m, -1, 1, {}, 2);  // columns 1 and 3
  expect_geometry(s, {3, 2}, {4, 2}, 1);
  EXPECT_EQ(values(s), (std::vector<double>{1, 3, 5, 7, 9, 11}));
}

TEST(Views, WriteThroughSliceChangesOnlyThoseElements) {
  for (DType dt : {DType::f32, DType::f64, DType::bf16, DType::f16, DType::i32, DType::i64}) {
    Tensor a = iota({3, 4}, dt);
    fill_(slice(a, 1, 1, {}, 2), Scalar(int64_t(-1)));
    std::vector<double> want = {0, -1, 2, -1, 4, -1, 6, -1, 8, -1, 10, -1};
    EXPECT_EQ(values(a), want) << dtype_name(dt);
  }
  Tensor b = iota({4}, DType::boolean);  // 0 1 1 1
  fill_(slice(b, 0, 1, 3), Scalar(false));
  EXPECT_EQ(values(b), (std::vector<double>{0, 0, 0, 1}));
}

TEST(Views, SelectAndNarrow) {
  Tensor a = iota({3, 4});
  Tensor r = select(a, 0, -1);
  expect_geometry(r, {4}, {1}, 8);
  Tensor c = select(a, 1, 2);
  expect_geometry(c, {3}, {4}, 2);
  EXPECT_EQ(values(c), (std::vector<double>{2, 6, 10}));
  fill_(c, Scalar(50));
  EXPECT_EQ(values(a), (std::vector<double>{0, 1, 50, 3, 4, 5, 50, 7, 8, 9, 50, 11}));
  EXPECT_THROW(select(a, 0, 3), Error);
  EXPECT_THROW(select(a, 0, -4), Error);
  EXPECT_THROW(select(a, 2, 0), Error);
  EXPECT_THROW(select(iota({}), 0, 0), Error);
  expect_geometry(select(select(a, 0, 1), 0, 3), {}, {}, 7);
  EXPECT_EQ(select(select(a, 0, 1), 0, 3).item(), 7.0);

  expect_geometry(narrow(a, 1, 1, 2), {3, 2}, {4, 1}, 1);
  expect_geometry(narrow(a, 0, -2, 2), {2, 4}, {4, 1}, 4);
  EXPECT_THROW(narrow(a, 1, 3, 2), Error);
  EXPECT_THROW(narrow(a, 1, 0, -1), Error);
  EXPECT_THROW(narrow(a, 1, 5, 0), Error);
}

TEST(Views, TransposePermuteT) {
  Tensor a = iota({2, 3, 4});
  Tensor tr = transpose(a, 0, -1);
  expect_geometry(tr, {4, 3, 2}, {1, 4, 12}, 0);
  // Write through the transpose: the base element at [1, 2, 3] = 23 changes.
  tr.as_strided({}, {}, 23).data<float>()[0] = -5.f;  // element [3, 2, 1] of tr
  EXPECT_EQ(a.data<float>()[23], -5.f);
  // fill_ through a row of the transpose: exactly the six elements with k == 2.
  fill_(select(tr, 0, 2), Scalar(-1));
  auto v = values(a);
  for (int i = 0; i < 24; ++i)
    EXPECT_EQ(v[i], i % 4 == 2 ? -1.0 : i == 23 ? -5.0 : double(i)) << i;
  expect_geometry(permute(a, {2, 0, 1}), {4, 2, 3}, {1, 12, 4}, 0);
  expect_geometry(permute(a, {-1, -2, -3}), {4, 3, 2}, {1, 4, 12}, 0);
  EXPECT_THROW(permute(a, {0, 1}), Error);
  EXPECT_THROW(permute(a, {0, 1, 1}), Error);
  EXPECT_THROW(transpose(a, 0, 3), Error);
  Tensor m = iota({2, 3});
  expect_geometry(t(m), {3, 2}, {1, 3}, 0);
  EXPECT_EQ(values(t(m)), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  expect_geometry(t(iota({5})), {5}, {1}, 0);
  expect_geometry(t(iota({})), {}, {}, 0);
  EXPECT_THROW(t(a), Error);
  EXPECT_TRUE(t(m).shares_storage(m));
}

TEST(Views, ExpandBroadcastsWithStrideZero) {
  Tensor a = iota({3, 1});
  Tensor e = expand(a, {2, 3, 4});
  expect_geometry(e, {2, 3, 4}, {0, 1, 0}, 0);
  EXPECT_EQ(values(select(e, 0, 1)), (std::vector<double>{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2}));
  expect_geometry(expand(a, {-1, 5}), {3, 5}, {1, 0}, 0);
  expect_geometry(expand(a, {3, 1}), {3, 1}, {1, 1}, 0);
  expect_geometry(expand(iota({}), {2, 2}), {2, 2}, {0, 0}, 0);
  EXPECT_THROW(expand(a, {4, 4}), Error);     // 3 is not 1
  EXPECT_THROW(expand(a, {4}), Error);        // fewer sizes than dims
  EXPECT_THROW(expand(a, {-1, 3, 4}), Error); // -1 on a new dim
  EXPECT_TRUE(e.shares_storage(a));
}

TEST(Views, UnsqueezeSqueeze) {
  Tensor a = iota({2, 3});
  expect_geometry(unsqueeze(a, 0), {1, 2, 3}, {6, 3, 1}, 0);
  expect_geometry(unsqueeze(a, 1), {2, 1, 3}, {3, 3, 1}, 0);
  expect_geometry(unsqueeze(a, -1), {2, 3, 1}, {3, 1, 1}, 0);
  expect_geometry(unsqueeze(a, 2), {2, 3, 1}, {3, 1, 1}, 0);
  EXPECT_THROW(unsqueeze(a, 3), Error);
  expect_geometry(unsqueeze(iota({}), 0), {1}, {1}, 0);
  Tensor b = iota({1, 2, 1, 3});
  expect_geometry(squeeze(b), {2, 3}, {3, 1}, 0);
  expect_geometry(squeeze(b, 2), {1, 2, 3}, {6, 3, 1}, 0);
  expect_geometry(squeeze(b, 1), {1, 2, 1, 3}, {6, 3, 3, 1}, 0);  // size 2: unchanged
  expect_geometry(squeeze(b, -4), {2, 1, 3}, {3, 3, 1}, 0);
  EXPECT_THROW(squeeze(b, 4), Error);
  expect_geometry(squeeze(iota({1})), {}, {}, 0);
}

TEST(Views, AliasAndAsStrided) {
  Tensor a = iota({6});
  Tensor al = alias(a);
  EXPECT_FALSE(al.is_same(a));
  EXPECT_TRUE(al.shares_storage(a));
  Tensor s = as_strided(a, {2, 2}, {1, 2}, 1);
  EXPECT_EQ(values(s), (std::vector<double>{1, 3, 2, 4}));
  EXPECT_EQ(as_strided(slice(a, 0, 2), {2}, {1}).storage_offset(), 2);
  EXPECT_THROW(as_strided(a, {4}, {2}, 0), Error);  // runs past the storage
  EXPECT_THROW(as_strided(a, {4}, {2, 1}, 0), Error);
}

// PyTorch: "as_strided: Negative strides are not supported at the moment, got
// strides: [-1]", from the Meta kernel too (so a graph refuses it when built).
TEST(Views, AsStridedRefusesNegativeStrides) {
  for (const Tensor& x : {iota({12}), Tensor::meta({12}, DType::f32)}) {
    try {
      as_strided(x, {2}, {-1}, 5);
      ADD_FAILURE() << "accepted a negative stride";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("as_strided: Negative strides are not supported at the "
                                           "moment, got strides: [-1]"),
                std::string::npos)
          << e.what();
    }
    EXPECT_THROW(as_strided(x, {2, 3}, {-3, 1}, 3), Error);
    EXPECT_EQ(as_strided(x, {2, 3}, {0, 1}, 0).strides(), (Shape{0, 1}));  // stride 0 is fine
  }
}

TEST(Views, MetaGivesMetaWithGeometry) {
  Tensor m = Tensor::meta({2, 3, 4}, DType::bf16);
  Tensor v = view(m, {6, -1});
  EXPECT_TRUE(v.is_meta());
  EXPECT_EQ(v.sizes(), (Shape{6, 4}));
  EXPECT_TRUE(reshape(transpose(m, 0, 2), {-1}).is_meta());
  EXPECT_EQ(reshape(transpose(m, 0, 2), {-1}).sizes(), (Shape{24}));
  EXPECT_EQ(slice(m, 2, 1, {}, 2).sizes(), (Shape{2, 3, 2}));
  EXPECT_EQ(slice(m, 2, 1, {}, 2).strides(), (Shape{12, 4, 2}));
  EXPECT_EQ(select(m, 1, -1).sizes(), (Shape{2, 4}));
  EXPECT_EQ(select(m, 1, -1).storage_offset(), 8);
  EXPECT_EQ(narrow(m, 0, 1, 1).sizes(), (Shape{1, 3, 4}));
  EXPECT_EQ(transpose(m, 0, 1).strides(), (Shape{4, 12, 1}));
  EXPECT_EQ(permute(m, {1, 2, 0}).sizes(), (Shape{3, 4, 2}));
  EXPECT_EQ(expand(unsqueeze(m, 0), {5, 2, 3, 4}).strides(), (Shape{0, 12, 4, 1}));
  EXPECT_EQ(squeeze(unsqueeze(m, 1)).sizes(), (Shape{2, 3, 4}));
  EXPECT_EQ(flatten(m, 1).sizes(), (Shape{2, 12}));
  EXPECT_EQ(t(select(m, 0, 0)).sizes(), (Shape{4, 3}));
  for (const Tensor& x : {v, slice(m, 0, 1), select(m, 0, 0), alias(m), flatten(m),
                          as_strided(m, {2}, {1}, 0)})
    EXPECT_TRUE(x.is_meta());
  EXPECT_EQ(alias(m).dtype(), DType::bf16);
  // Errors are still raised.
  EXPECT_THROW(view(m, {5, 5}), Error);
  EXPECT_THROW(view(transpose(m, 0, 2), {24}), Error);
  EXPECT_THROW(select(m, 0, 2), Error);
  EXPECT_THROW(expand(m, {3, 3, 4}), Error);
}

// Every piece is a narrow() of the input: same storage, offsets along dim.
TEST(Views, SplitChunkShareStorage) {
  Tensor a = iota({3, 5});
  auto s = split(a, 2, 1);
  ASSERT_EQ(s.size(), 3u);
  expect_geometry(s[0], {3, 2}, {5, 1}, 0);
  expect_geometry(s[2], {3, 1}, {5, 1}, 4);
  for (const Tensor& p : s) EXPECT_TRUE(p.shares_storage(a));
  fill_(s[1], -1);
  EXPECT_EQ(values(select(a, 0, 0)), (std::vector<double>{0, 1, -1, -1, 4}));
  EXPECT_EQ(split(a, 10, 1).size(), 1u);
  EXPECT_EQ(split(iota({0, 3}), 0).size(), 1u);  // an empty dim: one empty view
  auto w = split_with_sizes(a, {1, 0, 4}, -1);
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[1].sizes(), (Shape{3, 0}));
  expect_geometry(w[2], {3, 4}, {5, 1}, 1);
  // chunk: ceil(4 / 3) = 2 per view, so only 2 views; an empty dim keeps `chunks`.
  EXPECT_EQ(chunk(iota({4}), 3).size(), 2u);
  EXPECT_EQ(chunk(iota({5}), 5).size(), 5u);
  EXPECT_EQ(chunk(iota({0, 2}), 3, 0).size(), 3u);
  auto m = chunk(Tensor::meta({6, 4}, DType::bf16), 2, 0);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_TRUE(m[1].is_meta());
  EXPECT_EQ(m[1].storage_offset(), 12);
}

// PyTorch's refusals.
TEST(Views, SplitErrors) {
  Tensor a = iota({3, 4});
  EXPECT_THROW(split(a, 0, 1), Error);              // 0 only for an empty dim
  EXPECT_THROW(split(a, -1, 1), Error);
  EXPECT_THROW(split(iota({}), 1), Error);          // 0-dim
  EXPECT_THROW(split(a, 1, 2), Error);              // dim out of range
  EXPECT_THROW(split_with_sizes(a, {1, 2}, 1), Error);   // sums to 3, not 4
  EXPECT_THROW(split_with_sizes(a, {5, -1}, 1), Error);
  EXPECT_THROW(chunk(a, 0, 1), Error);
  EXPECT_THROW(chunk(iota({}), 1), Error);
}

TEST(Views, UnbindSelectsEachIndex) {
  Tensor x = iota({3, 2});
  std::vector<Tensor> rows = unbind(x);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(values(rows[2]), std::vector<double>({4, 5}));
  EXPECT_TRUE(rows[1].shares_storage(x));
  std::vector<Tensor> cols = unbind(x, -1);
  ASSERT_EQ(cols.size(), 2u);
  EXPECT_EQ(values(cols[1]), std::vector<double>({1, 3, 5}));
  EXPECT_TRUE(unbind(Tensor::empty({0, 4})).empty());
  EXPECT_THROW(unbind(testing::from({1}, {})), Error);
  EXPECT_EQ(unbind(Tensor::meta({2, 5}, DType::f16), 1).size(), 5u);
}

// Steps, lengths and split sizes near the int64 limits: the view PyTorch gives,
// or an Error, never a wrapped size.
TEST(Views, HugeStepsAndLengthsDoNotOverflow) {
  const Tensor t = iota({10});
  Tensor s = slice(t, 0, 2, std::nullopt, INT64_MAX);  // (e - s + step - 1) overflowed
  EXPECT_EQ(s.sizes(), (Shape{1}));
  EXPECT_EQ(values(s), (std::vector<double>{2}));
  EXPECT_EQ(slice(t, 0, 0, 10, 3).sizes(), (Shape{4}));
  EXPECT_THROW(narrow(t, 0, 5, INT64_MAX), Error);  // 5 + length wrapped below the size
  auto parts = split(t, INT64_MAX);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].sizes(), (Shape{10}));
  EXPECT_EQ(chunk(t, INT64_MAX).size(), 10u);
  EXPECT_THROW(split_with_sizes(t, {INT64_MAX, INT64_MAX, 12}), Error);
  EXPECT_THROW(view(t, {int64_t(1) << 32, (int64_t(1) << 32) + 1, -1}), Error);
}

}  // namespace
}  // namespace symmflow::kernels
