// Binary ops, promotion, layouts, in-place, out= and meta behaviour of pointwise.h.
#include "symmflow/kernels/pointwise.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "symmflow/kernels/pointwise_testing.h"
#include "symmflow/kernels/views.h"

namespace symmflow::kernels {
namespace {

using namespace testing;
using V = std::vector<double>;
const double kNaN = std::numeric_limits<double>::quiet_NaN();

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

TEST(PointwiseBinary, ArithmeticEveryNumericDType) {
  for (DType t : {DType::f32, DType::f64, DType::bf16, DType::f16, DType::i32, DType::i64}) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    Tensor a = make1({1, 2, -3, 8}, t), b = make1({4, 3, 2, -2}, t);
    EXPECT_EQ(add(a, b).dtype(), t);
    EXPECT_EQ(values(add(a, b)), V({5, 5, -1, 6}));
    EXPECT_EQ(values(add(a, b, 2)), V({9, 8, 1, 4}));
    EXPECT_EQ(values(sub(a, b)), V({-3, -1, -5, 10}));
    EXPECT_EQ(values(sub(a, b, 2)), V({-7, -4, -7, 12}));
    EXPECT_EQ(values(mul(a, b)), V({4, 6, -6, -16}));
    EXPECT_EQ(values(add(a, 3)), V({4, 5, 0, 11}));
    EXPECT_EQ(values(sub(a, 1)), V({0, 1, -4, 7}));
    EXPECT_EQ(values(mul(a, -2)), V({-2, -4, 6, -16}));
    EXPECT_EQ(values(maximum(a, b)), V({4, 3, 2, 8}));
    EXPECT_EQ(values(minimum(a, b)), V({1, 2, -3, -2}));
    EXPECT_EQ(values(div(a, b, "trunc")), V({0, 0, -1, -4}));
    EXPECT_EQ(values(div(a, b, "floor")), V({0, 0, -2, -4}));
    Tensor q = div(a, b);  // true division: integers become f32
    EXPECT_EQ(q.dtype(), is_floating(t) ? t : DType::f32);
    EXPECT_EQ(values(div(make1({1, -6, 3}, t), make1({4, 2, -2}, t))), V({0.25, -3, -1.5}));
  }
}

TEST(PointwiseBinary, BoolArithmetic) {
  Tensor a = make1({1, 0, 1, 0}, DType::boolean), b = make1({1, 1, 0, 0}, DType::boolean);
  Tensor s = add(a, b);
  EXPECT_EQ(s.dtype(), DType::boolean);  // PyTorch: True + True == True
  EXPECT_EQ(values(s), V({1, 1, 1, 0}));
  EXPECT_EQ(values(mul(a, b)), V({1, 0, 0, 0}));
  EXPECT_EQ(values(maximum(a, b)), V({1, 1, 1, 0}));
  EXPECT_EQ(values(minimum(a, b)), V({1, 0, 0, 0}));
  Tensor i = add(a, 3);  // bool + int Scalar -> i64
  EXPECT_EQ(i.dtype(), DType::i64);
  EXPECT_EQ(values(i), V({4, 3, 4, 3}));
  Tensor d = div(a, b);
  EXPECT_EQ(d.dtype(), DType::f32);
  EXPECT_EQ(values(d)[0], 1.0);
  EXPECT_TRUE(std::isnan(values(d)[3]));  // 0 / 0
  EXPECT_ERROR(sub(a, b), "two bool tensors");
  EXPECT_ERROR(sub(a, Scalar(true)), "two bool tensors");
  EXPECT_ERROR(sub(make1({1}), b), "with a bool tensor");
  EXPECT_ERROR(pow(a, b), "not implemented for dtype bool");
  EXPECT_ERROR(div(a, b, "floor"), "not implemented for dtype bool");
}

TEST(PointwiseBinary, PromotionCases) {
  Tensor i = make1({1, 2, 3}, DType::i32);
  Tensor r = mul(i, 2.5);
  EXPECT_EQ(r.dtype(), DType::f32);
  EXPECT_EQ(values(r), V({2.5, 5, 7.5}));
  EXPECT_EQ(mul(i, 2).dtype(), DType::i32);
  Tensor l = add(i, make1({10, 20, 30}, DType::i64));
  EXPECT_EQ(l.dtype(), DType::i64);
  EXPECT_EQ(values(l), V({11, 22, 33}));
  Tensor bf = add(make1({1, 2}, DType::bf16), make({}, {0.5}, DType::f32));
  EXPECT_EQ(bf.dtype(), DType::bf16);
  EXPECT_EQ(values(bf), V({1.5, 2.5}));
  Tensor f = add(make1({1, 2}, DType::bf16), make1({0.5, 0.5}, DType::f32));  // both dim > 0
  EXPECT_EQ(f.dtype(), DType::f32);
  EXPECT_EQ(add(i, make({}, {0.5}, DType::f64)).dtype(), DType::f64);
  EXPECT_EQ(add(make1({1}, DType::f16), make1({1}, DType::bf16)).dtype(), DType::f32);
  EXPECT_ERROR(add(i, i, 0.5), "alpha must not be a floating point number");
  EXPECT_ERROR(add(i, i, true), "boolean alpha");
}

TEST(PointwiseBinary, Broadcasting) {
  Tensor a = iota({4, 1, 3}), b = iota({5, 1}, DType::f32, 100);
  Tensor c = add(a, b);
  ASSERT_EQ(c.sizes(), Shape({4, 5, 3}));
  auto v = values(c);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 5; ++j)
      for (int k = 0; k < 3; ++k) EXPECT_EQ(v[(i * 5 + j) * 3 + k], (i * 3 + k) + 100.0 * j);
  // The row vector broadcast along the inner run, and the column one.
  Tensor m = iota({3, 4});
  EXPECT_EQ(values(mul(m, make1({1, 10, 100, 1000}))),
            V({0, 10, 200, 3000, 4, 50, 600, 7000, 8, 90, 1000, 11000}));
  EXPECT_EQ(values(sub(make({3, 1}, {1, 2, 3}), m)),
            V({1, 0, -1, -2, -2, -3, -4, -5, -5, -6, -7, -8}));
  EXPECT_ERROR(add(iota({3}), iota({4})), "[3]");
}

// A contiguous operand and a block repeated over its leading dims (a bias row of
// 16 or more elements) run as one dense loop per row, the row on either side,
// with promotion and in place; each element is still f(a, b).
TEST(PointwiseBinary, RepeatedRowOnEitherSide) {
  const Tensor m = iota({5, 40}, DType::f32, 0.5, 1);
  const Tensor row = iota({40}, DType::f32, 1000, 3);
  const Tensor row2 = iota({1, 40}, DType::f64, 0.1);  // promotes to f64
  const auto vm = values(m), vr = values(row), vr2 = values(row2);
  const auto sum = values(add(m, row)), diff = values(sub(row, m)), prod = values(mul(m, row2));
  EXPECT_EQ(mul(m, row2).dtype(), DType::f64);
  for (size_t i = 0; i < vm.size(); ++i) {
    ASSERT_EQ(sum[i], double(float(vm[i] + vr[i % 40])));
    ASSERT_EQ(diff[i], double(float(vr[i % 40] - vm[i])));
    ASSERT_EQ(prod[i], vm[i] * vr2[i % 40]);
  }
  const Tensor cube = iota({3, 4, 20}, DType::f32), plane = iota({4, 20}, DType::f32, 500);
  const auto vc = values(add(cube, plane, 2)), vp = values(plane), vq = values(cube);
  for (size_t i = 0; i < vc.size(); ++i) ASSERT_EQ(vc[i], vq[i] + 2 * vp[i % 80]);
  Tensor self = iota({5, 40}, DType::f32, 0.5, 1);
  add_(self, row);  // in place: the output is the contiguous operand
  EXPECT_EQ(values(self), sum);
}

// A contiguous operand and one value per run of trailing dims (a per-row
// statistic, [R, 1] against [R, C]: RMSNorm's x * rsqrt(mean), softmax's x - max)
// run as one dense loop per run, the column on either side, repeating over
// missing leading dims, with promotion and in place; each element is still f(a, b).
TEST(PointwiseBinary, RepeatedValuePerRowOnEitherSide) {
  const Tensor m = iota({5, 40}, DType::f32, 0.5, 1);
  const Tensor col = iota({5, 1}, DType::f32, 1000, 3);
  const Tensor col2 = iota({5, 1}, DType::f64, 0.1);  // promotes to f64
  const auto vm = values(m), vc = values(col), vc2 = values(col2);
  const auto prod = values(mul(m, col)), diff = values(sub(col, m)), quot = values(div(m, col2));
  EXPECT_EQ(div(m, col2).dtype(), DType::f64);
  for (size_t i = 0; i < vm.size(); ++i) {
    ASSERT_EQ(prod[i], double(float(vm[i] * vc[i / 40])));
    ASSERT_EQ(diff[i], double(float(vc[i / 40] - vm[i])));
    ASSERT_EQ(quot[i], vm[i] / vc2[i / 40]);
  }
  // [5, 1] against [3, 5, 40] (a missing leading dim: it repeats) and [5, 1, 1]
  // against [5, 4, 20] (a run of two trailing dims).
  const Tensor cube = iota({3, 5, 40}, DType::f32, 0.25), box = iota({5, 4, 20}, DType::f32, 7);
  const auto vq = values(add(cube, col, 2)), vcube = values(cube);
  for (size_t i = 0; i < vq.size(); ++i) ASSERT_EQ(vq[i], double(float(vcube[i] + 2 * vc[(i / 40) % 5])));
  const Tensor deep = iota({5, 1, 1}, DType::f32, -3);
  const auto vd = values(mul(box, deep)), vb = values(box), vdeep = values(deep);
  for (size_t i = 0; i < vd.size(); ++i) ASSERT_EQ(vd[i], double(float(vb[i] * vdeep[i / 80])));
  Tensor self = iota({5, 40}, DType::f32, 0.5, 1);
  mul_(self, col);  // in place: the output is the contiguous operand
  EXPECT_EQ(values(self), prod);
}

TEST(PointwiseBinary, StridedTransposedAndExpandedInputs) {
  Tensor base = iota({4, 6});
  Tensor tr = base.as_strided({6, 4}, {1, 6}, 0);        // base^T
  Tensor step = base.as_strided({2, 3}, {12, 2}, 1);     // rows 0,2; cols 1,3,5
  EXPECT_EQ(values(step), V({1, 3, 5, 13, 15, 17}));
  EXPECT_EQ(values(add(step, 1)), V({2, 4, 6, 14, 16, 18}));
  Tensor t2 = mul(tr, tr);
  auto v = values(t2);
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(v[i * 4 + j], double(j * 6 + i) * (j * 6 + i));
  Tensor row = iota({3});
  Tensor expanded = row.as_strided({4, 3}, {0, 1}, 0);   // stride-0 rows
  EXPECT_EQ(values(add(expanded, iota({4, 3}, DType::f32, 10))),
            V({0, 11, 22, 30, 41, 52, 60, 71, 82, 90, 101, 112}));
  Tensor col = make1({5}).as_strided({4, 3}, {0, 0}, 0);  // one value everywhere
  EXPECT_EQ(values(sub(col, expanded)), V({5, 4, 3, 5, 4, 3, 5, 4, 3, 5, 4, 3}));
  // A long transposed run and an odd length exercise every loop path.
  Tensor big = iota({37, 53}, DType::f64);
  Tensor bt = big.as_strided({53, 37}, {1, 53}, 0);
  Tensor s = add(bt, contiguous(bt), 2);
  auto sv = values(s), bv = values(bt);
  for (size_t i = 0; i < sv.size(); ++i) ASSERT_EQ(sv[i], 3 * bv[i]);
}

TEST(PointwiseBinary, InPlaceThroughAView) {
  Tensor m = iota({3, 4});
  Tensor col = m.as_strided({3}, {4}, 1);  // column 1
  const Tensor& r = add_(col, 100);
  EXPECT_TRUE(r.is_same(col));
  EXPECT_EQ(values(m), V({0, 101, 2, 3, 4, 105, 6, 7, 8, 109, 10, 11}));
  mul_(col, make1({1, 0, -1}));
  EXPECT_EQ(values(m), V({0, 101, 2, 3, 4, 0, 6, 7, 8, -109, 10, 11}));
  sub_(m, make1({1, 1, 1, 1}), 2);  // broadcast other
  EXPECT_EQ(values(m), V({-2, 99, 0, 1, 2, -2, 4, 5, 6, -111, 8, 9}));
  div_(m, 2);
  EXPECT_EQ(values(m)[0], -1);
  // Overlaps PyTorch leaves undecided (the views are not dense: columns 0:2 and 1:3)
  // read the old values: the input is copied first.
  Tensor g = iota({3, 4});
  add_(g.as_strided({3, 2}, {4, 1}, 0), g.as_strided({3, 2}, {4, 1}, 1));
  EXPECT_EQ(values(g), V({1, 3, 2, 3, 9, 11, 6, 7, 17, 19, 10, 11}));  // PyTorch's result
  // bf16 self with an f32 tensor: computed in f32, cast back into self.
  Tensor h = make1({1, 2}, DType::bf16);
  add_(h, make1({0.5, 0.25}));
  EXPECT_EQ(h.dtype(), DType::bf16);
  EXPECT_EQ(values(h), V({1.5, 2.25}));
}

// PyTorch refuses an in-place or out= write whose input partially overlaps it
// (ATen's assert_no_partial_overlap); the same view is fine.
TEST(PointwiseBinary, PartialOverlapIsAnError) {
  const std::string msg =
      "unsupported operation: some elements of the input tensor and the written-to tensor "
      "refer to a single memory location. Please clone() the tensor before performing the "
      "operation.";
  Tensor x = iota({8});
  Tensor a = x.as_strided({6}, {1}, 0), b = x.as_strided({6}, {1}, 2);  // x[0:6], x[2:8]
  EXPECT_ERROR(add_(a, b), "add_: " + msg);
  EXPECT_ERROR(sub_(a, b), "sub_: " + msg);
  EXPECT_ERROR(mul_(a, b), "mul_: " + msg);
  EXPECT_ERROR(div_(a, b), "div_: " + msg);
  EXPECT_ERROR(pow_(a, b), msg);
  EXPECT_ERROR(add_out(a, b, 1), "add_out: " + msg);
  EXPECT_ERROR(maximum_out(a, b, a), msg);
  EXPECT_ERROR(neg_out(a, b), msg);
  EXPECT_ERROR(clamp_out(a, b, 0, 1), msg);
  EXPECT_ERROR(add_(a, x.as_strided({}, {}, 2)), msg);  // a 0-dim element inside a, broadcast
  EXPECT_EQ(values(x), values(iota({8})));               // nothing was written
  // self and its transpose: the same bytes in another order.
  Tensor sq = iota({3, 3});
  EXPECT_ERROR(add_(sq, sq.as_strided({3, 3}, {1, 3}, 0)), msg);
  // Allowed: the same tensor, the same geometry, disjoint parts, an element outside.
  add_(a, a);
  add_(a, x.as_strided({6}, {1}, 0));
  EXPECT_EQ(values(x), V({0, 4, 8, 12, 16, 20, 6, 7}));
  add_(x.as_strided({2}, {1}, 0), x.as_strided({2}, {1}, 6));
  mul_(a, x.as_strided({}, {}, 7));
  EXPECT_EQ(values(x), V({42, 77, 56, 84, 112, 140, 6, 7}));
  Tensor fresh = add(b, a);  // functional: no written input
  EXPECT_EQ(fresh.sizes(), Shape({6}));
  // Meta tensors have no memory: only types are checked.
  Tensor m = Tensor::meta({6}, DType::f32);
  EXPECT_TRUE(add_(m, m.as_strided({6}, {1}, 2)).is_meta());
}

TEST(PointwiseBinary, InPlaceErrors) {
  Tensor i = make1({1, 2}, DType::i64);
  EXPECT_ERROR(add_(i, 2.5), "result type f32 can't be cast to the desired output type i64");
  EXPECT_ERROR(mul_(i, make1({1, 2})), "result type f32 can't be cast to the desired output type i64");
  EXPECT_ERROR(div_(i, 2), "result type f32 can't be cast to the desired output type i64");
  EXPECT_ERROR(add_(make1({1}, DType::boolean), 1), "result type i64 can't be cast");
  EXPECT_ERROR(add_(iota({3}), iota({2, 3})), "doesn't match the broadcast shape [2, 3]");
  EXPECT_ERROR(add_(iota({3}).as_strided({2, 3}, {0, 1}, 0), 1), "single memory location");
  EXPECT_EQ(values(div_(i, 2, "floor")), V({0, 1}));  // floor division stays integral
}

TEST(PointwiseBinary, OutVariants) {
  Tensor a = iota({2, 3}), b = iota({3});
  Tensor out = Tensor::empty({2, 3}, DType::f32);
  const Tensor& r = add_out(out, a, b);
  EXPECT_TRUE(r.is_same(out));
  EXPECT_EQ(values(out), V({0, 2, 4, 3, 5, 7}));
  Tensor wider = Tensor::empty({2, 3}, DType::f64);  // castable: written converted
  mul_out(wider, a, 0.5);
  EXPECT_EQ(values(wider), V({0, 0.5, 1, 1.5, 2, 2.5}));
  Tensor empty = Tensor::empty({0}, DType::f32);  // resized to the result shape
  sub_out(empty, a, b);
  EXPECT_EQ(empty.sizes(), Shape({2, 3}));
  EXPECT_EQ(values(empty), V({0, 0, 0, 3, 3, 3}));
  EXPECT_ERROR(add_out(Tensor::empty({3, 2}), a, b), "out= has shape [3, 2]");
  EXPECT_ERROR(add_out(Tensor::empty({2, 3}, DType::i32), a, b), "can't be cast");
  Tensor t = Tensor::empty({3, 2});  // a transposed out
  Tensor tv = t.as_strided({2, 3}, {1, 2}, 0);
  div_out(tv, a, 2);
  EXPECT_EQ(values(t), V({0, 1.5, 0.5, 2, 1, 2.5}));
}

TEST(PointwiseBinary, MetaInputsGiveMetaOutputs) {
  Tensor a = Tensor::meta({4, 1, 3}, DType::bf16), b = Tensor::meta({5, 1}, DType::f64);
  Tensor c = add(a, b);
  EXPECT_TRUE(c.is_meta());
  EXPECT_EQ(c.sizes(), Shape({4, 5, 3}));
  EXPECT_EQ(c.dtype(), DType::f64);
  EXPECT_EQ(mul(Tensor::meta({2}, DType::i32), 2.5).dtype(), DType::f32);
  EXPECT_EQ(div(Tensor::meta({2}, DType::i32), iota({2})).dtype(), DType::f32);
  EXPECT_TRUE(div(Tensor::meta({2}, DType::i32), iota({2})).is_meta());
  EXPECT_EQ(pow(Tensor::meta({2}, DType::i64), 2).dtype(), DType::i64);
  EXPECT_EQ(where(Tensor::meta({3, 1}, DType::boolean), iota({4}), 1).sizes(), Shape({3, 4}));
  EXPECT_ERROR(add(Tensor::meta({3}, DType::f32), Tensor::meta({4}, DType::f32)), "[4]");
  EXPECT_ERROR(add_(Tensor::meta({3}, DType::i32), 1.5), "can't be cast");
  EXPECT_ERROR(sub(Tensor::meta({3}, DType::boolean), true), "bool");
  EXPECT_ERROR(pow(Tensor::meta({3}, DType::i32), -1), "Integers to negative integer powers");
  EXPECT_ERROR(div(Tensor::meta({3}, DType::i32), 1, "round"), "rounding_mode");
  Tensor m = Tensor::meta({0}, DType::f32);  // an empty meta out is resized
  add_out(m, a, b);
  EXPECT_EQ(m.sizes(), Shape({4, 5, 3}));
  EXPECT_TRUE(m.is_meta());
  Tensor self = Tensor::meta({4, 5, 3}, DType::f32);
  EXPECT_TRUE(add_(self, a).is_same(self));
}

TEST(PointwiseBinary, Division) {
  Tensor a = make1({7, -7, 7, -7}), b = make1({2, 2, -2, -2});
  EXPECT_EQ(values(div(a, b)), V({3.5, -3.5, -3.5, 3.5}));
  EXPECT_EQ(values(div(a, b, "trunc")), V({3, -3, -3, 3}));
  EXPECT_EQ(values(div(a, b, "floor")), V({3, -4, -4, 3}));
  Tensor ia = make1({7, -7, 7, -7}, DType::i64), ib = make1({2, 2, -2, -2}, DType::i64);
  EXPECT_EQ(values(div(ia, ib, "trunc")), V({3, -3, -3, 3}));
  EXPECT_EQ(values(div(ia, ib, "floor")), V({3, -4, -4, 3}));
  EXPECT_EQ(values(div(ia, 2, "floor")), V({3, -4, 3, -4}));
  EXPECT_ERROR(div(ia, make1({1, 0, 1, 1}, DType::i64), "floor"), "ZeroDivisionError");
  EXPECT_ERROR(div(ia, 0, "trunc"), "ZeroDivisionError");
  Tensor z = div(make1({1, -1, 0}), 0.0);  // floats: IEEE
  EXPECT_EQ(values(z)[0], INFINITY);
  EXPECT_EQ(values(z)[1], -INFINITY);
  EXPECT_TRUE(std::isnan(values(z)[2]));
  EXPECT_EQ(values(div(make1({1, -1}), 0.0, "floor")), V({INFINITY, -INFINITY}));
  // INT_MIN / -1 wraps instead of trapping.
  const double lo = double(std::numeric_limits<int32_t>::min());
  EXPECT_EQ(values(div(make1({lo}, DType::i32), -1, "trunc")), V({lo}));
  // Python's floor division of floats: -0.0 keeps its sign, 5 // 0.5 == 10.
  Tensor fz = div(make1({-0.0, 5}), make1({3, 0.5}), "floor");
  EXPECT_TRUE(std::signbit(values(fz)[0]));
  EXPECT_EQ(values(fz)[1], 10);
}

TEST(PointwiseBinary, Pow) {
  Tensor x = make1({-2, 0.5, 3, 4});
  EXPECT_EQ(values(pow(x, 2)), V({4, 0.25, 9, 16}));
  EXPECT_EQ(values(pow(x, 3)), V({-8, 0.125, 27, 64}));
  EXPECT_EQ(values(pow(x, -1)), V({-0.5, 2, double(1.0f / 3.0f), 0.25}));
  EXPECT_EQ(values(pow(make1({4, 9}), 0.5)), V({2, 3}));
  EXPECT_EQ(values(pow(make1({4, 16}), -0.5)), V({0.5, 0.25}));
  EXPECT_EQ(values(pow(make1({2, 9}), 0)), V({1, 1}));
  EXPECT_EQ(values(pow(make1({2, 27}), make1({10, 1.0 / 3})))[0], 1024);
  EXPECT_EQ(values(pow(make1({8}), 1.0 / 3)), V({double(float(std::pow(8.0, double(1.0 / 3))))}));
  Tensor i = make1({-2, 0, 3, 5}, DType::i32);
  Tensor p = pow(i, 3);
  EXPECT_EQ(p.dtype(), DType::i32);
  EXPECT_EQ(values(p), V({-8, 0, 27, 125}));
  EXPECT_EQ(pow(i, 0.5).dtype(), DType::f32);
  EXPECT_ERROR(pow(i, -1), "Integers to negative integer powers are not allowed.");
  EXPECT_ERROR(pow_(i, -2), "Integers to negative integer powers are not allowed.");
  // Tensor exponents follow PyTorch's integer rules for negative powers.
  EXPECT_EQ(values(pow(make1({1, -1, -1, 2}, DType::i64), make1({-1, -3, -2, -1}, DType::i64))),
            V({1, -1, 1, 0}));
  Tensor e = make1({0, 1, 2, 3}, DType::i64);
  Tensor s = pow(Scalar(2), e);  // Scalar base
  EXPECT_EQ(s.dtype(), DType::i64);
  EXPECT_EQ(values(s), V({1, 2, 4, 8}));
  Tensor sf = pow(Scalar(0.5), e);
  EXPECT_EQ(sf.dtype(), DType::f32);
  EXPECT_EQ(values(sf), V({1, 0.5, 0.25, 0.125}));
  Tensor bf = make1({3}, DType::bf16);
  EXPECT_EQ(values(pow(bf, 2)), V({9}));
  pow_(x, 2);
  EXPECT_EQ(values(x), V({4, 0.25, 9, 16}));
}

// PyTorch's pow(Tensor, Scalar) per dtype (PowKernel.cpp, 1.13 and 2.x): f32, f64 and
// bf16 take sqrt for 0.5 and 1/sqrt for -0.5; f16 has no shortcut and calls pow().
TEST(PointwiseBinary, PowScalarPerDType) {
  const double inf = INFINITY;
  for (DType t : {DType::f32, DType::f64, DType::bf16}) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    auto r = values(pow(make1({-inf, -0.0, 4}, t), 0.5));
    EXPECT_TRUE(std::isnan(r[0]));
    EXPECT_TRUE(r[1] == 0 && std::signbit(r[1]));
    EXPECT_EQ(r[2], 2);
    auto q = values(pow(make1({-inf, -0.0}, t), -0.5));
    EXPECT_TRUE(std::isnan(q[0]));
    EXPECT_EQ(q[1], -inf);
  }
  auto h = values(pow(make1({-inf, -0.0, 4, -1}, DType::f16), 0.5));
  EXPECT_EQ(h[0], inf);
  EXPECT_TRUE(h[1] == 0 && !std::signbit(h[1]));
  EXPECT_EQ(h[2], 2);
  EXPECT_TRUE(std::isnan(h[3]));
  auto hq = values(pow(make1({-inf, -0.0}, DType::f16), -0.5));
  EXPECT_TRUE(hq[0] == 0 && !std::signbit(hq[0]));
  EXPECT_EQ(hq[1], inf);
  Tensor hv = Tensor::empty({40}, DType::f16);  // the long (dense) loop too
  fill_(hv, -inf);
  for (double v : values(pow(hv, 0.5))) ASSERT_EQ(v, inf);
  // bf16 rounds x*x to bf16 before x*x*x and 1/(x*x): BFloat16 arithmetic in PyTorch
  // (one rounding would give -27.375, -290, 47.75 and 0.10986328125, ...).
  Tensor b = make1({-3.015625, -6.625, 3.625}, DType::bf16);
  EXPECT_EQ(values(pow(b, 3)), V({-27.5, -292, 47.5}));
  EXPECT_EQ(values(pow(b, -2)), V({0.109375, 0.022705078125, 0.076171875}));
  // An exponent only the bf16 rounding makes 0.5 is no sqrt: pow(-inf, 0.5) = inf.
  EXPECT_EQ(values(pow(make1({-inf, -0.0}, DType::bf16), 0.5000001)), V({inf, 0}));
  // The exponent is converted to bf16/f16/integers with PyTorch's overflow check.
  EXPECT_ERROR(pow(make1({1}, DType::f16), 1e6),
               "pow: value cannot be converted to type at::Half without overflow");
  EXPECT_ERROR(pow(Tensor::meta({1}, DType::f16), 1e6), "without overflow");
  EXPECT_ERROR(pow(make1({1}, DType::bf16), 1e39), "type at::BFloat16 without overflow");
  EXPECT_ERROR(pow(make1({1}, DType::i32), int64_t(1) << 40), "type int without overflow");
  EXPECT_EQ(values(pow(make1({2}), 1e39)), V({inf}));  // f32 takes it as a double
}

TEST(PointwiseBinary, MaximumMinimumPropagateNaN) {
  Tensor a = make1({1, kNaN, 3, kNaN}), b = make1({2, 1, kNaN, kNaN});
  auto mx = values(maximum(a, b)), mn = values(minimum(a, b));
  EXPECT_EQ(mx[0], 2);
  EXPECT_EQ(mn[0], 1);
  for (int i = 1; i < 4; ++i) {
    EXPECT_TRUE(std::isnan(mx[i])) << i;
    EXPECT_TRUE(std::isnan(mn[i])) << i;
  }
  for (DType t : kFloatDTypes) {
    auto v = values(maximum(make1({kNaN, 1}, t), make1({0, kNaN}, t)));
    EXPECT_TRUE(std::isnan(v[0]) && std::isnan(v[1])) << dtype_name(t);
  }
  EXPECT_EQ(values(maximum(make1({1, 5}, DType::i32), make1({3}, DType::i64))), V({3, 5}));
  EXPECT_EQ(maximum(make1({1, 5}, DType::i32), make1({3}, DType::i64)).dtype(), DType::i64);
}

TEST(PointwiseBinary, Clamp) {
  Tensor x = make1({-2, 0.5, 3, kNaN});
  auto c = values(clamp(x, 0, 1));
  EXPECT_EQ(c[0], 0);
  EXPECT_EQ(c[1], 0.5);
  EXPECT_EQ(c[2], 1);
  EXPECT_TRUE(std::isnan(c[3]));
  EXPECT_EQ(values(clamp(make1({-2, 3}), std::nullopt, 1)), V({-2, 1}));
  EXPECT_EQ(values(clamp(make1({-2, 3}, DType::i64), 0)), V({0, 3}));
  EXPECT_EQ(clamp(make1({-2, 3}, DType::i64), 0.5).dtype(), DType::f32);
  Tensor i = make1({-5, 5, 50}, DType::i32);
  clamp_(i, -1, 10);
  EXPECT_EQ(values(i), V({-1, 5, 10}));
  EXPECT_ERROR(clamp(x, std::nullopt, std::nullopt), "at least one");
  EXPECT_ERROR(clamp_(i, 0.5), "can't be cast");
}

// PyTorch's clamp_out: both bounds given and either NaN -> every element NaN; a single
// NaN bound compares false and leaves x unchanged. Bounds must fit the dtype.
TEST(PointwiseBinary, ClampNaNBoundsAndOverflow) {
  const std::vector<double> v = {-0.0, 5, -3, 0, 1, 2};
  for (DType t : kFloatDTypes) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    for (auto r : {clamp(make1(v, t), kNaN, 2.0), clamp(make1(v, t), 0.0, kNaN),
                   clamp(make1(v, t), kNaN, kNaN)})
      for (double e : values(r)) ASSERT_TRUE(std::isnan(e));
    EXPECT_EQ(bytes(clamp(make1(v, t), kNaN)), bytes(make1(v, t)));
    EXPECT_EQ(bytes(clamp(make1(v, t), std::nullopt, kNaN)), bytes(make1(v, t)));
    Tensor y = make1(v, t);
    clamp_(y, kNaN, 1.0);
    for (double e : values(y)) ASSERT_TRUE(std::isnan(e));
    Tensor out = Tensor::empty({6}, t);
    clamp_out(out, make1(v, t), -1.0, kNaN);
    for (double e : values(out)) ASSERT_TRUE(std::isnan(e));
  }
  Tensor i = make1({1, 2}, DType::i32);  // a NaN bound makes the result f32
  Tensor r = clamp(i, kNaN, 2);
  EXPECT_EQ(r.dtype(), DType::f32);
  EXPECT_TRUE(std::isnan(values(r)[0]) && std::isnan(values(r)[1]));
  EXPECT_ERROR(clamp_(i, kNaN, 2), "can't be cast");
  EXPECT_ERROR(clamp(i, 0, int64_t(1) << 40), "clamp: value cannot be converted to type int without overflow");
  EXPECT_ERROR(clamp(Tensor::meta({2}, DType::i32), int64_t(1) << 40), "without overflow");
  EXPECT_ERROR(clamp(make1({1}), -1e39, 1e39), "type float without overflow");
  EXPECT_EQ(values(clamp(make1({-5, 5}), -INFINITY, 1)), V({-5, 1}));  // inf always fits
}

TEST(PointwiseWhere, SelectsAndPromotes) {
  Tensor c = make1({1, 0, 1}, DType::boolean);
  Tensor a = make1({1, 2, 3}, DType::i32), b = make1({-1, -2, -3});
  Tensor w = where(c, a, b);
  EXPECT_EQ(w.dtype(), DType::f32);
  EXPECT_EQ(values(w), V({1, -2, 3}));
  EXPECT_EQ(values(where(c, a, 0)), V({1, 0, 3}));
  EXPECT_EQ(where(c, a, 0).dtype(), DType::i32);
  EXPECT_EQ(where(c, a, 0.5).dtype(), DType::f32);
  EXPECT_EQ(values(where(c, 7, a)), V({7, 2, 7}));
  Tensor ss = where(c, 1.5, 0);
  EXPECT_EQ(ss.dtype(), DType::f32);
  EXPECT_EQ(values(ss), V({1.5, 0, 1.5}));
  // A [2,1] condition broadcast against [3] values.
  Tensor c2 = make({2, 1}, {0, 1}, DType::boolean);
  Tensor wb = where(c2, a, make1({9, 9, 9}, DType::i32));
  EXPECT_EQ(wb.sizes(), Shape({2, 3}));
  EXPECT_EQ(values(wb), V({9, 9, 9, 1, 2, 3}));
  Tensor out = Tensor::empty({2, 3}, DType::f64);
  where_out(out, c2, a, b);
  EXPECT_EQ(values(out), V({-1, -2, -3, 1, 2, 3}));
  EXPECT_ERROR(where(make1({1, 0, 1}), a, b), "condition to be bool");
  for (DType t : kAllDTypes) {
    Tensor x = make1({1, 0, 1}, t), y = make1({0, 1, 0}, t);
    EXPECT_EQ(values(where(c, x, y)), V({1, 1, 1})) << dtype_name(t);
  }
}

TEST(PointwiseBinary, ReducedFloatRoundsOncePerOp) {
  // 1 + 2^-8 is halfway between two bf16 values: round to even (1.0).
  Tensor a = make1({1, 1, 1}, DType::bf16);
  Tensor b = make1({0.00390625, 0.005859375, 0.0078125}, DType::bf16);
  EXPECT_EQ(values(add(a, b)), V({1.0, 1.0078125, 1.0078125}));
  // Any result: float math on the loaded values, then one round to nearest even.
  auto va = randoms(64, -4, 4, 7), vb = randoms(64, -4, 4, 8);
  for (DType t : {DType::bf16, DType::f16}) {
    Tensor x = make1(va, t), y = make1(vb, t);
    auto xs = values(x), ys = values(y);
    auto r = values(add(x, y, 3)), m = values(mul(x, y)), q = values(div(x, y));
    for (size_t i = 0; i < va.size(); ++i) {
      float fx = float(xs[i]), fy = float(ys[i]);
      auto round = [&](float f) {
        return t == DType::bf16 ? double(float(BFloat16(f))) : double(float(Half(f)));
      };
      ASSERT_EQ(r[i], round(fx + 3.0f * fy)) << i;
      ASSERT_EQ(m[i], round(fx * fy)) << i;
      ASSERT_EQ(q[i], round(fx / fy)) << i;
    }
  }
  // mul/div keep a Scalar (or a one-element second tensor) in float for bf16, as
  // PyTorch's CPU kernels; add casts it to bf16 first.
  Tensor one = make1({1}, DType::bf16);
  const double third = 1.0 / 3.0;
  EXPECT_EQ(values(mul(one, third)), V({double(float(BFloat16(float(third))))}));
  Tensor x = make1({3}, DType::bf16);
  EXPECT_EQ(values(mul(x, 0.1))[0], double(float(BFloat16(3.0f * 0.1f))));
  EXPECT_EQ(values(mul(x, make({}, {0.1}, DType::f32)))[0], double(float(BFloat16(3.0f * 0.1f))));
  EXPECT_EQ(values(add(x, 0.1))[0], double(float(BFloat16(3.0f + float(BFloat16(0.1f))))));
}

TEST(PointwiseBinary, EmptyAndZeroDim) {
  Tensor e = add(Tensor::empty({0, 3}), iota({3}));
  EXPECT_EQ(e.sizes(), Shape({0, 3}));
  EXPECT_EQ(div(Tensor::empty({0}, DType::i64), Tensor::empty({0}, DType::i64), "floor").numel(), 0);
  Tensor z = mul(make({}, {3}), make({}, {4}));
  EXPECT_EQ(z.dim(), 0);
  EXPECT_EQ(z.item(), 12);
  Tensor s = sub(make({}, {3}, DType::i32), 1);
  EXPECT_EQ(s.dtype(), DType::i32);
  EXPECT_EQ(s.item(), 2);
  EXPECT_EQ(add(make({}, {1}, DType::i64), make1({1, 2}, DType::i32)).dtype(), DType::i32);
}

TEST(PointwiseBinary, ClampMinMax) {
  Tensor x = make1({-2, 0.5, 3, NAN});
  EXPECT_EQ(values(clamp_min(x, 0)).at(0), 0);
  EXPECT_EQ(values(clamp_max(x, 1)).at(2), 1);
  EXPECT_EQ(values(clamp_max(x, 1)).at(0), -2);
  EXPECT_TRUE(std::isnan(values(clamp_min(x, 0))[3]));
  EXPECT_TRUE(std::isnan(values(clamp_max(x, NAN))[0]));  // unlike clamp(x, std::nullopt, NAN)
  EXPECT_EQ(values(clamp(x, std::nullopt, NAN))[0], -2);
  // Promotion is clamp's: an i32 tensor with a float bound becomes f32; bool with an
  // int bound becomes i64.
  EXPECT_EQ(clamp_min(make1({1, 2}, DType::i32), 1.5).dtype(), DType::f32);
  EXPECT_EQ(clamp_max(make1({1, 0}, DType::boolean), 0).dtype(), DType::i64);
  Tensor y = make1({-1, 5}, DType::i64);
  EXPECT_TRUE(clamp_min_(y, 0).is_same(y));
  clamp_max_(y, 3);
  EXPECT_EQ(values(y), V({0, 3}));
  EXPECT_ERROR(clamp_min_(make1({1}, DType::i32), 0.5), "clamp_min_");
  EXPECT_ERROR(clamp_max(make1({1}, DType::i32), Scalar(int64_t(1) << 40)), "clamp_max");
}

TEST(PointwiseBinary, BitwiseAndOrXor) {
  Tensor a = make1({1, 1, 0, 0}, DType::boolean), b = make1({1, 0, 1, 0}, DType::boolean);
  EXPECT_EQ(bitwise_and(a, b).dtype(), DType::boolean);
  EXPECT_EQ(values(bitwise_and(a, b)), V({1, 0, 0, 0}));
  EXPECT_EQ(values(bitwise_or(a, b)), V({1, 1, 1, 0}));
  EXPECT_EQ(values(bitwise_xor(a, b)), V({0, 1, 1, 0}));
  Tensor i = make1({6, -1, 5}, DType::i32);
  EXPECT_EQ(values(bitwise_and(i, 3)), V({2, 3, 1}));
  EXPECT_EQ(bitwise_or(a, make1({2, 2, 2, 2}, DType::i64)).dtype(), DType::i64);  // promoted
  EXPECT_EQ(values(bitwise_or(a, make1({2, 2, 2, 2}, DType::i64))), V({3, 3, 2, 2}));
  bitwise_and_(a, b);
  EXPECT_EQ(values(a), V({1, 0, 0, 0}));
  EXPECT_ERROR(bitwise_and(make1({1}), make1({1})), "bitwise_and: not implemented for dtype f32");
  EXPECT_ERROR(bitwise_or(i, 0.5), "not implemented for dtype f32");
  EXPECT_ERROR(bitwise_and_(a, make1({1, 1, 1, 1}, DType::i64)), "bitwise_and_");  // i64 into bool
  EXPECT_TRUE(bitwise_and(Tensor::meta({2, 1}, DType::boolean), Tensor::meta({3}, DType::boolean)).is_meta());
}

TEST(PointwiseBinary, ClampWithTensorBounds) {
  Tensor x = make1({-2, 0.5, 3, NAN});
  Tensor lo = make1({0, 1, 0, 0}), hi = make1({1});
  EXPECT_EQ(values(clamp_tensor(x, lo, hi)).at(0), 0);
  EXPECT_EQ(values(clamp_tensor(x, lo, hi)).at(1), 1);
  EXPECT_EQ(values(clamp_tensor(x, std::nullopt, hi)).at(2), 1);
  EXPECT_TRUE(std::isnan(values(clamp_tensor(x, lo, std::nullopt))[3]));
  EXPECT_TRUE(std::isnan(values(clamp_tensor(make1({1}), make1({NAN}), std::nullopt))[0]));  // a NaN bound
  EXPECT_EQ(clamp_tensor(make1({1, 2}, DType::i32), make1({1.5, 1.5}), std::nullopt).dtype(), DType::f32);
  EXPECT_EQ(clamp_tensor(make1({1, 2, 3}), make({2, 1}, {0, 0}), std::nullopt).sizes(), (Shape{2, 3}));
  EXPECT_ERROR(clamp_tensor(x, std::nullopt, std::nullopt), "At least one");
}

TEST(PointwiseBinary, RsubSwapsSubsOperands) {
  Tensor x = make1({1, 2, -3}, DType::i32);
  Tensor r = rsub(x, 1);  // 1 - x
  EXPECT_EQ(r.dtype(), DType::i32);
  EXPECT_EQ(values(r), V({0, -1, 4}));
  EXPECT_EQ(values(rsub(x, 10, 2)), V({8, 6, 16}));  // 10 - 2 * x
  EXPECT_EQ(rsub(x, 0.5).dtype(), DType::f32);       // a float Scalar promotes
  EXPECT_EQ(values(rsub(x, make1({5, 5, 5}, DType::i64))), V({4, 3, 8}));
  EXPECT_ERROR(rsub(make1({1}, DType::boolean), 1), "rsub: subtraction");
  EXPECT_ERROR(rsub(x, 1, 0.5), "alpha must not be a floating point");
  Tensor m = rsub(Tensor::meta({2, 1}, DType::bf16), 1.0);
  EXPECT_TRUE(m.is_meta());
  EXPECT_EQ(m.dtype(), DType::bf16);
}

TEST(PointwiseBinary, IntegerOverflowWraps) {
  const double big = double(std::numeric_limits<int32_t>::max());
  Tensor i = make1({big}, DType::i32);
  EXPECT_EQ(values(add(i, 1)), V({double(std::numeric_limits<int32_t>::min())}));
  EXPECT_EQ(values(mul(i, 2)), V({-2}));
}

// A binary op of an operand in the result's layout and one dense in another
// (x.t() - y: y read across) copies the second into the result's layout by the
// tiled transpose first (pointwise_impl.h; copy.cc's 4-byte blocks, the element
// loop for f64): the values of the contiguous case, in either operand order
// (rsub puts the operand read across first), with edges outside whole blocks.
TEST(PointwiseLayout, AnOperandReadAcrossGivesTheValuesOfTheContiguousCase) {
  for (DType dt : {DType::f32, DType::f64, DType::i32}) {
    SCOPED_TRACE(dtype_name(dt));
    const Tensor x = iota({37, 19}, dt, 0.25, -3.0), y = iota({19, 37}, dt, 0.5, 1.0);
    const Tensor xt = t(x), xc = contiguous(xt);
    EXPECT_EQ(values(sub(xt, y)), values(sub(xc, y)));
    EXPECT_EQ(values(sub(y, xt)), values(sub(y, xc)));
    EXPECT_EQ(values(rsub(xt, y)), values(rsub(xc, y)));
    EXPECT_EQ(values(mul(xt, y)), values(mul(xc, y)));
  }
}

// A fresh result takes its operands' layout as PyTorch's TensorIterator gives it
// (core/layout.h; python/tests/test_result_layout.py compares with torch): the
// same strides on the CPU and the Meta kernel, the values of the contiguous case.
TEST(PointwiseLayout, FreshResultTakesItsOperandsLayout) {
  const Tensor x = iota({3, 4}, DType::f32, 0.25, -1.0), y = iota({4, 3}, DType::f32, 0.5, -2.0);
  const Tensor xt = t(x), xc = contiguous(xt);
  const Tensor xm = Tensor::meta({4, 3}, DType::f32, {1, 4}), ym = Tensor::meta({4, 3}, DType::f32);
  const Shape transposed{1, 4}, row_major{3, 1};
  EXPECT_EQ(exp(xt).strides(), transposed);
  EXPECT_EQ(exp(xm).strides(), transposed);
  EXPECT_EQ(values(exp(xt)), values(exp(xc)));
  EXPECT_EQ(neg(xt).strides(), transposed);
  EXPECT_EQ(values(neg(xt)), values(neg(xc)));
  EXPECT_EQ(add(xt, y).strides(), transposed);  // the first operand decides
  EXPECT_EQ(add(xm, ym).strides(), transposed);
  EXPECT_EQ(values(add(xt, y)), values(add(xc, y)));
  EXPECT_EQ(add(y, xt).strides(), row_major);
  EXPECT_EQ(add(ym, xm).strides(), row_major);
  EXPECT_EQ(values(add(y, xt)), values(add(y, xc)));
  EXPECT_EQ(rsub(xt, y).strides(), row_major);  // PyTorch's sub(y, x.t())
  EXPECT_EQ(gt(xt, 0).strides(), transposed);
  EXPECT_EQ(values(gt(xt, 0)), values(gt(xc, 0)));
  EXPECT_EQ(where(gt(xt, 0), xt, y).strides(), transposed);
  EXPECT_EQ(values(where(gt(xt, 0), xt, y)), values(where(gt(xc, 0), xc, y)));
  EXPECT_EQ(clamp(xt, -0.5, 0.5).strides(), transposed);
  EXPECT_EQ(values(clamp(xt, -0.5, 0.5)), values(clamp(xc, -0.5, 0.5)));
  EXPECT_EQ(add(xt, make1({1, 2, 3})).strides(), transposed);  // a row broadcast orders nothing
  EXPECT_EQ(values(add(xt, make1({1, 2, 3}))), values(add(xc, make1({1, 2, 3}))));
  // Not dense (every other column): its dims' order, made dense.
  const Tensor cols = slice(iota({4, 6}), 1, 0, 6, 2);
  EXPECT_EQ(exp(cols).strides(), row_major);
  EXPECT_EQ(exp(t(cols)).strides(), (Shape{1, 3}));  // [3, 4] in the order of t(cols)
  EXPECT_EQ(values(exp(t(cols))), values(exp(contiguous(t(cols)))));
}

// hardtanh allocates as PyTorch's does (empty_like): a dense input's strides
// exactly, a size-1 dim's too, where TensorIterator makes a contiguous input's
// result row-major.
TEST(PointwiseLayout, HardtanhKeepsADenseInputsStridesExactly) {
  const Tensor x = iota({12}).as_strided({4, 1, 3}, {3, 99, 1}, 0);
  EXPECT_EQ(hardtanh(x).strides(), (Shape{3, 99, 1}));
  EXPECT_EQ(exp(x).strides(), (Shape{3, 3, 1}));
  EXPECT_EQ(hardtanh(Tensor::meta({4, 1, 3}, DType::f32, {3, 99, 1})).strides(), (Shape{3, 99, 1}));
  EXPECT_EQ(values(hardtanh(x)), values(hardtanh(contiguous(x))));
}

}  // namespace
}  // namespace symmflow::kernels
