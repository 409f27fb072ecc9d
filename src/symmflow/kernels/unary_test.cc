// Unary ops of pointwise.h: values, dtypes, promotion, in place, meta.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "symmflow/kernels/copy.h"
#include "symmflow/kernels/pointwise.h"
#include "symmflow/kernels/pointwise_testing.h"
#include "symmflow/kernels/vec_math.h"
#include "symmflow/kernels/views.h"

namespace symmflow::kernels {
namespace {

using namespace testing;
using V = std::vector<double>;
const double kNaN = std::numeric_limits<double>::quiet_NaN();

bool throws_with(auto&& fn, std::string_view substr) {
  try {
    fn();
  } catch (const Error& e) {
    return std::string_view(e.what()).find(substr) != std::string_view::npos;
  }
  return false;
}

TEST(PointwiseUnary, HandComputedValues) {
  Tensor x = make1({0, 1, 4, 0.25});
  EXPECT_EQ(values(sqrt(x)), V({0, 1, 2, 0.5}));
  EXPECT_EQ(values(rsqrt(make1({1, 4, 0.25}))), V({1, 0.5, 2}));
  EXPECT_EQ(values(rsqrt(make1({0})))[0], INFINITY);
  EXPECT_EQ(values(exp(make1({0})))[0], 1);
  EXPECT_EQ(values(exp(make1({1})))[0], double(std::exp(1.0f)));
  EXPECT_EQ(values(log(make1({1, 0})))[0], 0);
  EXPECT_EQ(values(log(make1({1, 0})))[1], -INFINITY);
  EXPECT_TRUE(std::isnan(values(log(make1({-1})))[0]));
  EXPECT_EQ(values(sin(make1({0})))[0], 0);
  EXPECT_EQ(values(cos(make1({0})))[0], 1);
  EXPECT_EQ(values(tanh(make1({0, 100, -100}))), V({0, 1, -1}));
  EXPECT_EQ(values(sigmoid(make1({0, 100, -200}))), V({0.5, 1, 0}));
  EXPECT_EQ(values(neg(make1({1, -2, 0}))), V({-1, 2, -0.0}));
  EXPECT_EQ(values(abs(make1({1, -2, -0.0}))), V({1, 2, 0}));
  EXPECT_FALSE(std::signbit(values(abs(make1({-0.0})))[0]));
  // sigmoid is 1 / (1 + exp(-x)) in float; rsqrt is 1 / sqrt(x).
  const float s = 1.0f / (1.0f + std::exp(-0.75f));
  EXPECT_EQ(values(sigmoid(make1({0.75})))[0], double(s));
  EXPECT_EQ(values(rsqrt(make1({3})))[0], double(1.0f / std::sqrt(3.0f)));
}

TEST(PointwiseUnary, ReluKeepsNaNAndNegativeZero) {
  auto r = values(relu(make1({-1, 2, kNaN, -0.0, 0})));
  EXPECT_EQ(r[0], 0);
  EXPECT_EQ(r[1], 2);
  EXPECT_TRUE(std::isnan(r[2]));
  EXPECT_TRUE(std::signbit(r[3]));  // PyTorch: clamp_min(-0.0, 0) == -0.0
  EXPECT_EQ(r[4], 0);
  Tensor i = make1({-3, 3}, DType::i32);
  EXPECT_EQ(relu(i).dtype(), DType::i32);
  EXPECT_EQ(values(relu(i)), V({0, 3}));
  for (DType t : kFloatDTypes) EXPECT_TRUE(std::isnan(values(relu(make1({kNaN}, t)))[0]));
  EXPECT_TRUE(throws_with([] { relu(make1({1}, DType::boolean)); }, "not implemented for dtype bool"));
}

TEST(PointwiseUnary, Gelu) {
  auto v = randoms(40, -5, 5, 3);
  v.push_back(0);
  Tensor x = make1(v);
  auto ge = values(gelu(x)), gt = values(gelu(x, "tanh"));
  for (size_t i = 0; i < v.size(); ++i) {
    float f = float(v[i]);
    // f32 gelu is oneDNN's gelu_erf (PyTorch's; vec_math.h): Abramowitz and
    // Stegun's erf (|error| <= 1.5e-7) on oneDNN's exp: within 2e-7 on -5..5.
    const double want = double(f) * 0.5 * (1.0 + std::erf(double(f) * M_SQRT1_2));
    ASSERT_NEAR(ge[i], want, 0.5 * std::fabs(f) * 2e-7 + 4 * std::numeric_limits<float>::epsilon() * std::fabs(want))
        << f;
    float c = f * f * f;
    float want_t =
        0.5f * f * (1.0f + std::tanh(float(M_SQRT2 * M_2_SQRTPI * 0.5) * (f + 0.044715f * c)));
    ASSERT_EQ(gt[i], double(want_t)) << f;
  }
  // A strided view gets the same bits as its contiguous copy (the layout never matters).
  const Tensor mt = t(reshape(make1(randoms(64, -5, 5, 4)), {8, 8}));
  EXPECT_EQ(values(gelu(mt)), values(gelu(contiguous(mt))));
  // f64 is the formula on SLEEF's erf, within 4 ulp of glibc's.
  EXPECT_NEAR(values(gelu(make1({1}, DType::f64)))[0], 0.5 * (1.0 + std::erf(M_SQRT1_2)), 1e-15);
  EXPECT_TRUE(throws_with([] { gelu(make1({1}), "fast"); }, "approximate"));
  EXPECT_TRUE(throws_with([] { gelu(make1({1}, DType::i64)); }, "not implemented for dtype i64"));
  EXPECT_TRUE(throws_with([] { gelu(Tensor::meta({2}, DType::i64)); }, "dtype i64"));
  Tensor y = make1({1, -1});
  gelu_(y, "tanh");
  EXPECT_EQ(values(y), values(gelu(make1({1, -1}), "tanh")));
}

// The far negative tail of tanh-gelu is -0.0, as in PyTorch's (vectorized) kernel:
// its tanh is exactly -1 once |inner| > 8.664339742 (float; 18.714973875 double),
// where std::tanh is still one ulp short of -1 and 1 + tanh would not cancel.
TEST(PointwiseUnary, GeluTanhFarTailIsNegativeZero) {
  for (DType t : {DType::f32, DType::bf16, DType::f16}) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    for (double v : values(gelu(make1({-5.0625, -10, -30}, t), "tanh")))
      ASSERT_TRUE(v == 0 && std::signbit(v)) << v;
    EXPECT_TRUE(std::isnan(values(gelu(make1({-INFINITY}, t), "tanh"))[0]));  // -inf * 0
  }
  // f64: inner(-7.15) = -18.75 is past double's threshold (std::tanh: 1 ulp short).
  double d = values(gelu(make1({-7.15}, DType::f64), "tanh"))[0];
  EXPECT_TRUE(d == 0 && std::signbit(d)) << d;
  // Short of the threshold the formula is evaluated term by term, bf16 in float
  // (PyTorch 2.x; 1.13 computes bf16 in bf16 arithmetic and gets -0.0 here).
  const float x = -3.8125f, c = x * x * x;
  const float want = 0.5f * x * (1.0f + std::tanh(float(M_SQRT2 * M_2_SQRTPI * 0.5) * (x + 0.044715f * c)));
  EXPECT_EQ(values(gelu(make1({-3.8125}, DType::bf16), "tanh"))[0], double(float(BFloat16(want))));
  EXPECT_LT(values(gelu(make1({-3.8125}, DType::bf16), "tanh"))[0], -1e-4);
  // The erf form is untouched: the tail is the formula's value.
  const float xe = -5.0625f;
  EXPECT_EQ(values(gelu(make1({-5.0625})))[0],
            double(xe * 0.5f * (1.0f + std::erf(xe * float(M_SQRT1_2)))));
}

TEST(PointwiseUnary, IntegersPromoteToFloat) {
  Tensor i = make1({0, 1, 4}, DType::i64);
  for (auto fn : {+[](const Tensor& t) { return exp(t); }, +[](const Tensor& t) { return log(t); },
                  +[](const Tensor& t) { return sqrt(t); }, +[](const Tensor& t) { return rsqrt(t); },
                  +[](const Tensor& t) { return sin(t); }, +[](const Tensor& t) { return cos(t); },
                  +[](const Tensor& t) { return tanh(t); },
                  +[](const Tensor& t) { return sigmoid(t); }}) {
    EXPECT_EQ(fn(i).dtype(), DType::f32);
    EXPECT_EQ(fn(make1({1, 0}, DType::boolean)).dtype(), DType::f32);
    EXPECT_EQ(fn(Tensor::meta({3}, DType::i32)).dtype(), DType::f32);
  }
  EXPECT_EQ(values(sqrt(i)), V({0, 1, 2}));
  EXPECT_EQ(neg(i).dtype(), DType::i64);
  EXPECT_EQ(values(neg(i)), V({0, -1, -4}));
  EXPECT_EQ(values(abs(make1({-7, 7}, DType::i32))), V({7, 7}));
  EXPECT_TRUE(throws_with([&] { exp_(i); }, "result type f32 can't be cast to the desired output type i64"));
  EXPECT_TRUE(throws_with([] { neg(make1({1}, DType::boolean)); }, "bool tensor is not supported"));
}

// silu(x) = x / (1 + exp(-x)) in float (PyTorch's CPU kernel); integers and bool are
// refused ("silu_cpu" not implemented for 'Long'), and out= takes no promotion.
TEST(PointwiseUnary, Silu) {
  EXPECT_EQ(values(silu(make1({0, 100, -200, INFINITY}))), V({0, 100, -0.0, INFINITY}));
  EXPECT_TRUE(std::signbit(values(silu(make1({-200})))[0]));  // -200 / inf
  EXPECT_TRUE(std::signbit(values(silu(make1({-0.0})))[0]));
  EXPECT_TRUE(std::isnan(values(silu(make1({-INFINITY})))[0]));  // -inf / inf, as PyTorch
  const float want = 0.75f / (1.0f + std::exp(-0.75f));
  EXPECT_EQ(values(silu(make1({0.75})))[0], double(want));
  EXPECT_TRUE(std::isnan(values(silu(make1({kNaN})))[0]));
  Tensor b = make1({0.75}, DType::bf16);
  EXPECT_EQ(values(silu(b))[0], double(float(BFloat16(want))));  // in float, rounded once
  Tensor x = make1({1, -2});
  silu_(x);
  EXPECT_EQ(values(x)[1], double(-2.0f / (1.0f + std::exp(2.0f))));
  EXPECT_TRUE(throws_with([] { silu(make1({1}, DType::i64)); }, "silu: not implemented for dtype i64"));
  EXPECT_TRUE(throws_with([] { silu(make1({1}, DType::boolean)); }, "not implemented for dtype bool"));
  EXPECT_TRUE(throws_with([] { silu(Tensor::meta({2}, DType::i32)); }, "not implemented for dtype i32"));
  EXPECT_TRUE(throws_with([] { silu_out(Tensor::empty({1}, DType::f64), make1({1})); }, "Found dtype f64 but expected f32"));
  EXPECT_TRUE(silu(Tensor::meta({2, 3}, DType::bf16)).is_meta());
}

TEST(PointwiseUnary, ErfReciprocalBitwiseNot) {
  EXPECT_EQ(values(erf(make1({0, INFINITY, -INFINITY}))), V({0, 1, -1}));
  EXPECT_EQ(values(erf(make1({0.5})))[0], double(std::erf(0.5f)));
  EXPECT_TRUE(std::signbit(values(erf(make1({-0.0})))[0]));
  EXPECT_EQ(values(reciprocal(make1({2, -0.0, 0, INFINITY}))), V({0.5, -INFINITY, INFINITY, 0}));
  // Integers and bool become f32 (1 / 0 == inf).
  Tensor r = reciprocal(make1({4, 0}, DType::i32));
  EXPECT_EQ(r.dtype(), DType::f32);
  EXPECT_EQ(values(r), V({0.25, INFINITY}));
  EXPECT_EQ(erf(make1({1, 0}, DType::boolean)).dtype(), DType::f32);
  // bitwise_not: ~x on integers, not on bool; floats are refused.
  Tensor b = bitwise_not(make1({1, 0}, DType::boolean));
  EXPECT_EQ(b.dtype(), DType::boolean);
  EXPECT_EQ(values(b), V({0, 1}));
  EXPECT_EQ(values(bitwise_not(make1({0, 5, -1}, DType::i64))), V({-1, -6, 0}));
  EXPECT_TRUE(throws_with([] { bitwise_not(make1({1})); }, "bitwise_not: not implemented for dtype f32"));
  EXPECT_TRUE(throws_with([] { bitwise_not(Tensor::meta({2}, DType::bf16)); }, "not implemented"));
  Tensor m = make1({1, 1, 0}, DType::boolean);
  bitwise_not_(m);
  EXPECT_EQ(values(m), V({0, 0, 1}));
}

TEST(PointwiseUnary, ActivationsWithParameters) {
  Tensor x = make1({-2, -0.0, 0.5, 30});
  EXPECT_EQ(values(leaky_relu(x)), V({double(-2 * 0.01f), 0, 0.5, 30}));
  EXPECT_EQ(values(leaky_relu(x, 0.5)), V({-1, 0, 0.5, 30}));
  EXPECT_TRUE(std::signbit(values(leaky_relu(x))[1]));
  std::vector<double> e = values(elu(x));
  EXPECT_EQ(e[0], double(std::exp(-2.0f) - 1.0f));
  EXPECT_EQ(e[3], 30);
  EXPECT_EQ(values(elu(x, 2, 3, 0.5))[0], double((std::exp(-1.0f) - 1.0f) * 6.0f));
  std::vector<double> sp = values(softplus(x));
  EXPECT_NEAR(sp[0], std::log1p(std::exp(-2.0)), 1e-7);
  EXPECT_EQ(sp[3], 30);  // past the threshold: x itself
  EXPECT_EQ(values(softplus(x, 2, 0.9))[2], 0.5);  // 0.5 * 2 > 0.9
  EXPECT_EQ(values(hardtanh(x)), V({-1, -0.0, 0.5, 1}));
  EXPECT_EQ(values(hardtanh(make1({-3, 2, 9}, DType::i32), 0.5, 6.7)), V({0, 2, 6}));  // bounds truncated
  EXPECT_TRUE(throws_with([] { hardtanh(make1({1}, DType::boolean)); }, "Bool inputs not supported"));
  EXPECT_TRUE(throws_with([] { hardtanh(make1({1}, DType::i64), NAN, 1.0); }, "hardtanh"));
  EXPECT_TRUE(throws_with([] { leaky_relu(make1({1}, DType::i64)); }, "leaky_relu: not implemented for dtype i64"));
  EXPECT_TRUE(throws_with([] { elu(Tensor::meta({2}, DType::i32)); }, "not implemented for dtype i32"));
  Tensor y = make1({-4, 4});
  leaky_relu_(y, 0.25);
  elu_(y);
  hardtanh_(y, -0.5, 2);
  EXPECT_EQ(values(y), V({-0.5, 2}));  // -4 -> -1 -> exp(-1) - 1 -> -0.5
  EXPECT_EQ(softplus(Tensor::meta({3}, DType::bf16)).dtype(), DType::bf16);
  EXPECT_TRUE(hardtanh(Tensor::meta({3}, DType::f32)).is_meta());
}

TEST(PointwiseUnary, RoundingSignLog1pExpm1Log2) {
  Tensor x = make1({-2.5, -0.5, 0.5, 1.5, 2.5});
  EXPECT_EQ(values(floor(x)), V({-3, -1, 0, 1, 2}));
  EXPECT_EQ(values(ceil(x)), V({-2, -0.0, 1, 2, 3}));
  EXPECT_EQ(values(round(x)), V({-2, -0.0, 0, 2, 2}));  // half to even
  EXPECT_EQ(values(trunc(x)), V({-2, -0.0, 0, 1, 2}));
  EXPECT_TRUE(std::signbit(values(ceil(x))[1]));
  Tensor i = make1({-3, 7}, DType::i32);
  EXPECT_EQ(floor(i).dtype(), DType::i32);
  EXPECT_EQ(values(round(i)), V({-3, 7}));
  EXPECT_TRUE(throws_with([] { floor(make1({1}, DType::boolean)); }, "floor: not implemented for dtype bool"));
  EXPECT_TRUE(throws_with([] { round_out(Tensor::empty({1}, DType::f64), make1({1})); }, "Found dtype f64"));
  Tensor sg = sign(make1({kNaN, -0.0, -4, 0.5}));
  EXPECT_EQ(values(sg), V({0, 0, -1, 1}));
  EXPECT_FALSE(std::signbit(values(sg)[1]));  // +0, as PyTorch 1.13
  EXPECT_EQ(values(sign(make1({-5, 0, 9}, DType::i64))), V({-1, 0, 1}));
  EXPECT_EQ(sign(make1({1, 0}, DType::boolean)).dtype(), DType::boolean);
  EXPECT_EQ(values(log1p(make1({0, -1})))[1], -INFINITY);
  EXPECT_EQ(values(expm1(make1({0, -INFINITY}))), V({0, -1}));
  EXPECT_EQ(values(log2(make1({8, 0.5}))), V({3, -1}));
  EXPECT_EQ(log2(make1({4}, DType::i64)).dtype(), DType::f32);
}

TEST(PointwiseUnary, IsnanIsinf) {
  Tensor x = make1({kNaN, INFINITY, -INFINITY, 0, 1});
  EXPECT_EQ(isnan(x).dtype(), DType::boolean);
  EXPECT_EQ(values(isnan(x)), V({1, 0, 0, 0, 0}));
  EXPECT_EQ(values(isinf(x)), V({0, 1, 1, 0, 0}));
  EXPECT_EQ(values(isinf(make1({kNaN, INFINITY}, DType::bf16))), V({0, 1}));
  EXPECT_EQ(values(isinf(make1({5, -1}, DType::i64))), V({0, 0}));
  EXPECT_EQ(values(isnan(make1({1, 0}, DType::boolean))), V({0, 0}));
  EXPECT_EQ(isinf(Tensor::meta({3}, DType::i32)).dtype(), DType::boolean);
}

// PyTorch: "abs_cpu" not implemented for 'Bool' (also the Meta kernel, and abs_/out).
TEST(PointwiseUnary, AbsOfBoolIsAnError) {
  EXPECT_TRUE(throws_with([] { abs(make1({1, 0}, DType::boolean)); }, "abs: not implemented for dtype bool"));
  EXPECT_TRUE(throws_with([] { abs(Tensor::meta({2}, DType::boolean)); }, "not implemented for dtype bool"));
  EXPECT_TRUE(throws_with([] { abs_(make1({1, 0}, DType::boolean)); }, "not implemented for dtype bool"));
  EXPECT_TRUE(throws_with([] { abs_out(make1({1, 0}, DType::boolean), make1({1, 0}, DType::boolean)); },
                          "not implemented for dtype bool"));
}

// out= dtypes, as PyTorch 1.13/2.x: neg, abs and gelu take no type promotion (out must
// have x's dtype); relu.out is generated from relu (the result is copied: any dtype);
// the float ops cast the result type (f32 -> f64 or f16 fine, f32 -> i64 not).
TEST(PointwiseUnary, OutDTypeRules) {
  Tensor f = make1({-1.5, 2.5});
  Tensor i = make1({-3, 4}, DType::i32);
  EXPECT_TRUE(throws_with([&] { neg_out(Tensor::empty({2}, DType::f64), f); },
                          "neg_out: Found dtype f64 but expected f32"));
  EXPECT_TRUE(throws_with([&] { neg_out(Tensor::empty({2}, DType::i64), i); },
                          "Found dtype i64 but expected i32"));
  EXPECT_TRUE(throws_with([&] { abs_out(Tensor::empty({2}, DType::f64), f); },
                          "abs_out: Found dtype f64 but expected f32"));
  EXPECT_TRUE(throws_with([&] { abs_out(Tensor::empty({2}, DType::i64), i); },
                          "Found dtype i64 but expected i32"));
  EXPECT_TRUE(throws_with([&] { gelu_out(Tensor::empty({2}, DType::f64), f); },
                          "gelu_out: Found dtype f64 but expected f32"));
  EXPECT_TRUE(throws_with([&] { gelu_out(Tensor::empty({2}, DType::bf16), f, "tanh"); },
                          "Found dtype bf16 but expected f32"));
  // The Meta kernels refuse them too.
  EXPECT_TRUE(throws_with([&] { abs_out(Tensor::meta({2}, DType::f64), Tensor::meta({2}, DType::f32)); },
                          "Found dtype f64 but expected f32"));
  Tensor same = Tensor::empty({2}, DType::i32);
  EXPECT_EQ(values(abs_out(same, i)), V({3, 4}));
  EXPECT_EQ(values(gelu_out(Tensor::empty({2}), make1({0, 0}))), V({0, 0}));
  // relu: computed in x's dtype, then converted into any out.
  Tensor r64 = Tensor::empty({2}, DType::i64);
  EXPECT_EQ(values(relu_out(r64, f)), V({0, 2}));  // 2.5 -> 2, as copy_
  Tensor rb = Tensor::empty({2}, DType::boolean);
  EXPECT_EQ(values(relu_out(rb, make1({-1, 0.25}))), V({0, 1}));
  Tensor rf = Tensor::empty({0}, DType::f16);  // an empty out is resized
  EXPECT_EQ(values(relu_out(rf, i)), V({0, 4}));
  EXPECT_EQ(rf.sizes(), Shape({2}));
  // relu.out copies a finished result, so out may even overlap x (PyTorch too).
  Tensor x = iota({8}, DType::f32, 1, -4);  // -4 .. 3
  relu_out(x.as_strided({6}, {1}, 0), x.as_strided({6}, {1}, 2));
  EXPECT_EQ(values(x), V({0, 0, 0, 1, 2, 3, 2, 3}));
  EXPECT_TRUE(throws_with([&] { relu_out(x.as_strided({2, 3}, {0, 1}, 0), make({2, 3}, {1, 2, 3, 4, 5, 6})); },
                          "more than one element of the written-to tensor"));
  // Other ops: the result type must cast.
  EXPECT_EQ(values(exp_out(Tensor::empty({2}, DType::f16), make1({0, 0}, DType::i32))), V({1, 1}));
  EXPECT_TRUE(throws_with([&] { exp_out(Tensor::empty({2}, DType::i64), f); },
                          "result type f32 can't be cast to the desired output type i64"));
}

TEST(PointwiseUnary, EveryFloatDTypeMatchesComputeTypeThenRounds) {
  auto v = randoms(50, 0.1, 3, 11);
  for (DType t : kFloatDTypes) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    Tensor x = make1(v, t);
    auto xs = values(x);
    auto round = [&](double r) -> double {
      switch (t) {
        case DType::f32: return float(r);
        case DType::bf16: return float(BFloat16(float(r)));
        case DType::f16: return float(Half(float(r)));
        default: return r;
      }
    };
    // Compute as the kernel does: f64 natively, everything else in float.
    auto ref = [&](auto fn, double xv) -> double {
      return t == DType::f64 ? fn(xv) : round(double(fn(float(xv))));
    };
    auto e = values(exp(x)), l = values(log(x)), s = values(sqrt(x)), th = values(tanh(x));
    auto sg = values(sigmoid(x));
    for (size_t i = 0; i < v.size(); ++i) {
      // exp, log, tanh, sigmoid: SLEEF's (vec_math.h), sqrt: IEEE.
      ASSERT_EQ(e[i], ref([](auto a) { return vec::apply(vec::Fn::exp, a); }, xs[i]));
      ASSERT_EQ(l[i], ref([](auto a) { return vec::apply(vec::Fn::log, a); }, xs[i]));
      ASSERT_EQ(s[i], ref([](auto a) { return std::sqrt(a); }, xs[i]));
      ASSERT_EQ(th[i], ref([](auto a) { return vec::apply(vec::Fn::tanh, a); }, xs[i]));
      ASSERT_EQ(sg[i], ref([](auto a) {
        return decltype(a)(1) / (decltype(a)(1) + vec::apply(vec::Fn::exp, -a));
      }, xs[i]));
    }
    EXPECT_EQ(exp(x).dtype(), t);
  }
}

TEST(PointwiseUnary, InPlaceAndOutThroughViews) {
  Tensor m = iota({3, 3}, DType::f32, 1, -4);  // -4 .. 4
  Tensor col = m.as_strided({3}, {3}, 2);     // column 2: -2, 1, 4
  const Tensor& r = relu_(col);
  EXPECT_TRUE(r.is_same(col));
  EXPECT_EQ(values(m), V({-4, -3, 0, -1, 0, 1, 2, 3, 4}));
  Tensor tr = m.as_strided({3, 3}, {1, 3}, 0);
  neg_(tr);
  EXPECT_EQ(values(m), V({4, 3, 0, 1, 0, -1, -2, -3, -4}));
  abs_(m);
  EXPECT_EQ(values(m), V({4, 3, 0, 1, 0, 1, 2, 3, 4}));
  sqrt_(m);
  EXPECT_EQ(values(m), V({2, std::sqrt(3.0f), 0, 1, 0, 1, std::sqrt(2.0f), std::sqrt(3.0f), 2}));
  Tensor out = Tensor::empty({3}, DType::f64);
  exp_out(out, make1({0, 0, 0}, DType::i32));
  EXPECT_EQ(values(out), V({1, 1, 1}));
  Tensor empty = Tensor::empty({0});
  sigmoid_out(empty, make1({0, 0}));
  EXPECT_EQ(values(empty), V({0.5, 0.5}));
  EXPECT_TRUE(throws_with([] { tanh_out(Tensor::empty({3}), make1({0, 0})); }, "out= has shape [3]"));
  EXPECT_TRUE(throws_with([] { sin_out(Tensor::empty({1}, DType::i32), make1({0})); }, "can't be cast"));
  for (auto* f : {&exp_, &log_, &sin_, &cos_, &tanh_, &sigmoid_, &rsqrt_}) {
    Tensor a = make1({1, 2});
    EXPECT_TRUE(f(a).is_same(a));
  }
}

TEST(PointwiseUnary, MetaInputs) {
  Tensor m = Tensor::meta({2, 5}, DType::bf16);
  for (Tensor r : {exp(m), neg(m), relu(m), gelu(m), sigmoid(m)}) {
    EXPECT_TRUE(r.is_meta());
    EXPECT_EQ(r.sizes(), Shape({2, 5}));
    EXPECT_EQ(r.dtype(), DType::bf16);
  }
  EXPECT_TRUE(exp_(m).is_meta());
  EXPECT_TRUE(throws_with([&] { exp_out(Tensor::meta({3}, DType::f32), m); }, "out= has shape"));
}

}  // namespace
}  // namespace symmflow::kernels
