#include "symmflow/kernels/copy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>

#include "symmflow/kernels/kernel_testing.h"

namespace symmflow::kernels {
namespace {

using testing::from;
using testing::iota;
using testing::values;

std::string error_of(auto&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}
#define EXPECT_ERROR(stmt, substr) \
  EXPECT_NE(error_of([&] { stmt; }).find(substr), std::string::npos) << error_of([&] { stmt; })

TEST(Copy, BroadcastsAndConverts) {
  Tensor src = iota({3}, DType::i64);  // 0 1 2
  Tensor dst = Tensor::empty({2, 3}, DType::bf16);
  copy_(dst, src);
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 3; ++c) EXPECT_EQ(float(dst.data<BFloat16>()[r * 3 + c]), float(c));
}

TEST(Copy, ThroughTransposedView) {
  Tensor a = iota({2, 3});
  Tensor t = a.as_strided({3, 2}, {1, 3}, 0);  // a^T
  Tensor c = contiguous(t);
  std::vector<float> want = {0, 3, 1, 4, 2, 5};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(c.data<float>()[i], want[i]);
  // Write through the view: the base changes.
  Tensor col = a.as_strided({2}, {3}, 1);
  fill_(col, Scalar(9.5));
  EXPECT_EQ(a.data<float>()[1], 9.5f);
  EXPECT_EQ(a.data<float>()[4], 9.5f);
  EXPECT_EQ(a.data<float>()[0], 0.0f);
}

// A transposed 4-byte view copied into a row-major tensor runs by 8 x 8 blocks in
// registers with element-by-element edges: every element lands in its place,
// for shapes with and without whole blocks, an offset view with a wider row,
// and in the other direction (a row-major tensor into a transposed view).
TEST(Copy, TransposedFourByteBlocksPutEveryElementInPlace) {
  for (DType dt : {DType::f32, DType::i32}) {
    for (auto [rows, cols] : {std::pair<int64_t, int64_t>{19, 37}, {32, 48}, {16, 16}, {5, 3}, {40, 17}}) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + " " + std::to_string(rows) + "x" + std::to_string(cols));
      // base: [cols, rows + 3]; view: columns 2 .. rows + 1, transposed: [rows, cols], strides [1, rows + 3].
      const Tensor base = iota({cols, rows + 3}, dt);
      const Tensor view = base.as_strided({rows, cols}, {1, rows + 3}, 2);
      const Tensor c = contiguous(view);
      const std::vector<double> got = values(c), all = values(base);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t k = 0; k < cols; ++k)
          ASSERT_EQ(got[size_t(r * cols + k)], all[size_t(k * (rows + 3) + 2 + r)]) << r << "," << k;
      Tensor back = Tensor::empty({cols, rows}, dt);
      copy_(back.as_strided({rows, cols}, {1, rows}, 0), c);  // into a transposed view
      const std::vector<double> b = values(back);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t k = 0; k < cols; ++k) ASSERT_EQ(b[size_t(k * rows + r)], got[size_t(r * cols + k)]);
    }
  }
}

TEST(Copy, EveryDTypePair) {
  const DType all[] = {DType::f32, DType::f64, DType::bf16, DType::f16,
                       DType::i32, DType::i64, DType::boolean};
  for (DType s : all)
    for (DType d : all) {
      Tensor src = iota({4}, s);
      Tensor out = to_dtype(src, d);
      for (int i = 0; i < 4; ++i) {
        double want = s == DType::boolean || d == DType::boolean ? (i != 0) : i;
        double got = 0;
        SF_DISPATCH(d, got = double(out.data<T>()[i]));
        EXPECT_EQ(got, want)
            << dtype_name(s) << "->" << dtype_name(d);
      }
    }
}

TEST(Copy, MetaComputesNothing) {
  Tensor m = Tensor::meta({2, 3}, DType::f32);
  EXPECT_TRUE(clone(m).is_meta());
  EXPECT_THROW(copy_(m, Tensor::meta({4}, DType::f32)), Error);
}

// src must broadcast to exactly dst's shape, with PyTorch's messages, on real and
// meta tensors alike (the Meta kernel used to accept f32[3] <- f32[2, 3]).
TEST(Copy, SourceMustBroadcastToDst) {
  const char* msg = "copy_: output with shape [3] doesn't match the broadcast shape [2, 3]";
  EXPECT_ERROR(copy_(Tensor::empty({3}), iota({2, 3})), msg);
  EXPECT_ERROR(copy_(Tensor::meta({3}, DType::f32), Tensor::meta({2, 3}, DType::f32)), msg);
  EXPECT_ERROR(checked_copy_(Tensor::meta({3}, DType::f32), Tensor::meta({2, 3}, DType::f32)), msg);
  EXPECT_ERROR(copy_(Tensor::meta({3}, DType::f32), Tensor::meta({1, 3}, DType::f32)),
               "output with shape [3] doesn't match the broadcast shape [1, 3]");
  EXPECT_ERROR(copy_(Tensor::meta({2, 3}, DType::f32), Tensor::meta({4}, DType::f32)),
               "copy_: The size of tensor a (3) must match the size of tensor b (4) at "
               "non-singleton dimension 1");
  EXPECT_TRUE(copy_(Tensor::meta({2, 3}, DType::f32), Tensor::meta({1, 3}, DType::bf16)).is_meta());
  Tensor d = Tensor::empty({2, 3});
  copy_(d, from({1, 2, 3}, {1, 3}));
  EXPECT_EQ(values(d), (std::vector<double>{1, 2, 3, 1, 2, 3}));
}

// aten::copy_ (checked_copy_): PyTorch's memory checks, before any copying.
TEST(Copy, CheckedCopyRefusesOverlappingWrites) {
  Tensor x = iota({8});
  Tensor a = x.as_strided({6}, {1}, 0), b = x.as_strided({6}, {1}, 2);
  EXPECT_ERROR(checked_copy_(a, b),
               "copy_: unsupported operation: some elements of the input tensor and the "
               "written-to tensor refer to a single memory location. Please clone() the tensor "
               "before performing the operation.");
  EXPECT_ERROR(checked_copy_(b, a), "refer to a single memory location");
  Tensor sq = iota({3, 3});
  EXPECT_ERROR(checked_copy_(sq, sq.as_strided({3, 3}, {1, 3}, 0)), "refer to a single memory location");
  EXPECT_EQ(values(x), values(iota({8})));
  // Writing into an expanded tensor: several elements at one address. Also on meta.
  const char* internal =
      "copy_: unsupported operation: more than one element of the written-to tensor refers to "
      "a single memory location. Please clone() the tensor before performing the operation.";
  Tensor e = iota({3}).as_strided({2, 3}, {0, 1}, 0);  // expand([3] -> [2, 3])
  EXPECT_ERROR(checked_copy_(e, iota({2, 3})), internal);
  EXPECT_ERROR(checked_copy_(e, iota({3})), internal);
  EXPECT_ERROR(checked_copy_(Tensor::meta({2, 3}, DType::f32, {0, 1}), Tensor::meta({2, 3}, DType::f32)),
               internal);
  // Allowed: the same tensor or geometry (a no-op, even when expanded), disjoint
  // views, an expanded *source*, a size-1 dim with stride 0.
  EXPECT_TRUE(checked_copy_(e, e).is_same(e));
  checked_copy_(e, e.as_strided({2, 3}, {0, 1}, 0));
  checked_copy_(x.as_strided({4}, {1}, 0), x.as_strided({4}, {1}, 4));
  EXPECT_EQ(values(x), (std::vector<double>{4, 5, 6, 7, 4, 5, 6, 7}));
  Tensor d = Tensor::empty({2, 3});
  checked_copy_(d, e);
  checked_copy_(iota({3}).as_strided({1, 3}, {0, 1}, 0), iota({1, 3}));
  // Not dense on both sides: undecided in PyTorch, copied as is.
  Tensor g = iota({3, 4});
  checked_copy_(g.as_strided({3, 2}, {4, 1}, 0), g.as_strided({3, 2}, {4, 1}, 2));
  EXPECT_EQ(values(g), (std::vector<double>{2, 3, 2, 3, 6, 7, 6, 7, 10, 11, 10, 11}));
  // The plain kernel copies into repeated layouts (clone_layout of an expanded view).
  Tensor cl = clone_layout(e);
  EXPECT_EQ(cl.strides(), e.strides());
  EXPECT_EQ(values(cl), values(e));
}

// fill_ converts its value with PyTorch's overflow check (checked_convert): the
// error, with PyTorch's C++ type names, also from the Meta kernel.
TEST(Copy, FillValueMustFitTheDType) {
  struct Case { DType dt; Scalar v; const char* type; };
  const double nan = std::nan(""), inf = INFINITY;
  for (const Case& c : {Case{DType::i32, nan, "int"}, Case{DType::i64, nan, "int64_t"},
                        Case{DType::i64, inf, "int64_t"}, Case{DType::i32, -inf, "int"},
                        Case{DType::i32, Scalar(int64_t(4294967296)), "int"},
                        Case{DType::i32, Scalar(int64_t(-2147483649)), "int"},
                        Case{DType::i32, 2147483648.0, "int"}, Case{DType::i64, 1e19, "int64_t"},
                        Case{DType::f16, 1e6, "at::Half"}, Case{DType::f16, 65520.0, "at::Half"},
                        Case{DType::f16, Scalar(int64_t(70000)), "at::Half"},
                        Case{DType::bf16, 1e39, "at::BFloat16"},
                        Case{DType::bf16, 3.4028231e38, "at::BFloat16"},
                        Case{DType::f32, 3.5e38, "float"}, Case{DType::f32, -1e39, "float"}}) {
    SCOPED_TRACE(std::string(dtype_name(c.dt)));
    const std::string want = "fill_: value cannot be converted to type " + std::string(c.type) +
                             " without overflow";
    EXPECT_ERROR(fill_(Tensor::empty({2}, c.dt), c.v), want);
    EXPECT_ERROR(fill_(Tensor::meta({2}, c.dt), c.v), want);
  }
  // What fits (PyTorch accepts each of these).
  auto one = [](DType dt, Scalar v) {
    Tensor t = Tensor::empty({1}, dt);
    fill_(t, v);
    return values(t)[0];
  };
  EXPECT_EQ(one(DType::i32, Scalar(int64_t(2147483647))), 2147483647.0);
  EXPECT_EQ(one(DType::i32, 2147483646.5), 2147483646.0);  // truncated
  EXPECT_ERROR(one(DType::i32, 2147483647.5), "type int without overflow");  // > INT_MAX
  EXPECT_EQ(one(DType::i32, -2.5), -2.0);
  EXPECT_EQ(one(DType::i64, Scalar(int64_t(4294967296))), 4294967296.0);
  EXPECT_EQ(one(DType::f16, 65504.0), 65504.0);
  EXPECT_EQ(one(DType::f16, inf), inf);
  EXPECT_TRUE(std::isnan(one(DType::f16, nan)));
  EXPECT_EQ(one(DType::bf16, 3.3e38), double(float(BFloat16(3.3e38f))));
  EXPECT_EQ(one(DType::f32, 3.4028231e38), double(3.4028231e38f));
  EXPECT_EQ(one(DType::f64, 1e300), 1e300);
  EXPECT_EQ(one(DType::boolean, nan), 1.0);  // nothing overflows bool
  EXPECT_EQ(one(DType::f16, Scalar(true)), 1.0);
  // An expanded tensor may be filled (PyTorch fills without an overlap check).
  Tensor e = iota({3}).as_strided({2, 3}, {0, 1}, 0);
  fill_(e, 2.0);
  EXPECT_EQ(values(e), std::vector<double>(6, 2.0));
}

}  // namespace
}  // namespace symmflow::kernels
