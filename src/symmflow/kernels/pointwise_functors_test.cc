// The fusion contract: every kernel's element is bitwise the functor of
// pointwise_functors.h applied in compute type and stored as the element type.
#include "symmflow/kernels/pointwise_functors.h"

#include <gtest/gtest.h>

#include <functional>

#include "symmflow/kernels/pointwise.h"
#include "symmflow/kernels/pointwise_testing.h"

namespace symmflow::kernels {
namespace {

using namespace testing;

// Element i of contiguous t as element type T.
template <typename T> T elem(const Tensor& t, int64_t i) { return contiguous(t).data<T>()[i]; }

template <typename T> bool same_bits(T a, T b) { return std::memcmp(&a, &b, sizeof(T)) == 0; }

// 67 elements (not a multiple of the vector block) plus a transposed 9x7 view, so
// the dense, the broadcast and the strided loops are all covered.
std::vector<Tensor> inputs(DType t, double lo, double hi, uint64_t seed) {
  Tensor flat = make1(randoms(67, lo, hi, seed), t);
  Tensor sq = make({7, 9}, randoms(63, lo, hi, seed + 100), t);
  return {flat, sq.as_strided({9, 7}, {1, 9}, 0)};
}

template <typename T, typename F>
void check_unary(const char* name, std::function<Tensor(const Tensor&)> kernel, F f, double lo,
                 double hi) {
  for (const Tensor& x : inputs(DTypeOf<T>::value, lo, hi, 5)) {
    Tensor y = kernel(x);
    ASSERT_EQ(y.dtype(), x.dtype()) << name;
    for (int64_t i = 0; i < x.numel(); ++i) {
      T want = from_compute<T>(f(to_compute(elem<T>(x, i))));
      ASSERT_TRUE(same_bits(elem<T>(y, i), want)) << name << " " << dtype_name(x.dtype()) << " @" << i;
    }
  }
}

template <typename T, typename Out, typename F>
void check_binary(const char* name, std::function<Tensor(const Tensor&, const Tensor&)> kernel, F f,
                  double lo, double hi) {
  auto xs = inputs(DTypeOf<T>::value, lo, hi, 21), ys = inputs(DTypeOf<T>::value, lo, hi, 42);
  for (size_t k = 0; k < xs.size(); ++k) {
    Tensor z = kernel(xs[k], ys[k]);
    for (int64_t i = 0; i < z.numel(); ++i) {
      Out want = from_compute<Out>(f(to_compute(elem<T>(xs[k], i)), to_compute(elem<T>(ys[k], i))));
      ASSERT_TRUE(same_bits(elem<Out>(z, i), want)) << name << " " << dtype_name(z.dtype()) << " @" << i;
    }
  }
  // One side broadcast along the run: x[67] op y[0].
  Tensor y0 = ys[0].as_strided({67}, {0}, 0);
  Tensor z = kernel(xs[0], y0);
  for (int64_t i = 0; i < 67; ++i) {
    Out want = from_compute<Out>(f(to_compute(elem<T>(xs[0], i)), to_compute(elem<T>(ys[0], 0))));
    ASSERT_TRUE(same_bits(elem<Out>(z, i), want)) << name << " bcast @" << i;
  }
}

template <typename T> void check_all() {
  using C = compute_t<T>;
  namespace fn = functors;
  check_unary<T>("neg", [](auto& x) { return neg(x); }, fn::Neg{}, -3, 3);
  check_unary<T>("abs", [](auto& x) { return abs(x); }, fn::Abs{}, -3, 3);
  check_unary<T>("relu", [](auto& x) { return relu(x); }, fn::Relu{}, -3, 3);
  check_unary<T>("exp", [](auto& x) { return exp(x); }, fn::Exp{}, -3, 3);
  check_unary<T>("log", [](auto& x) { return log(x); }, fn::Log{}, 0.01, 9);
  check_unary<T>("sqrt", [](auto& x) { return sqrt(x); }, fn::Sqrt{}, 0, 9);
  check_unary<T>("rsqrt", [](auto& x) { return rsqrt(x); }, fn::Rsqrt{}, 0.01, 9);
  check_unary<T>("sin", [](auto& x) { return sin(x); }, fn::Sin{}, -5, 5);
  check_unary<T>("cos", [](auto& x) { return cos(x); }, fn::Cos{}, -5, 5);
  check_unary<T>("tanh", [](auto& x) { return tanh(x); }, fn::Tanh{}, -4, 4);
  check_unary<T>("sigmoid", [](auto& x) { return sigmoid(x); }, fn::Sigmoid{}, -6, 6);
  check_unary<T>("gelu", [](auto& x) { return gelu(x); }, fn::Gelu{}, -4, 4);
  check_unary<T>("gelu_tanh", [](auto& x) { return gelu(x, "tanh"); }, fn::GeluTanh{}, -4, 4);
  check_unary<T>("pow 2.5", [](auto& x) { return pow(x, 2.5); },
                 fn::PowScalar{std::is_same_v<T, double> || std::is_same_v<T, float>
                                   ? 2.5 : double(float(T(2.5f)))}, 0, 3);
  check_unary<T>("pow 2", [](auto& x) { return pow(x, 2); }, fn::PowScalar{2}, -3, 3);
  check_unary<T>("clamp", [](auto& x) { return clamp(x, -1, 0.5); },
                 [](C x) { return fn::Clamp{}(x, C(-1), to_compute(T(0.5f))); }, -3, 3);
  check_unary<T>("add scalar", [](auto& x) { return add(x, 0.5, 3); },
                 [](C x) { return fn::Add{}(x, to_compute(T(0.5f)), to_compute(T(3.0f))); }, -3, 3);

  check_binary<T, T>("add", [](auto& a, auto& b) { return add(a, b, 2); },
                     [](C a, C b) { return fn::Add{}(a, b, C(2)); }, -3, 3);
  check_binary<T, T>("sub", [](auto& a, auto& b) { return sub(a, b); },
                     [](C a, C b) { return fn::Sub{}(a, b, C(1)); }, -3, 3);
  check_binary<T, T>("mul", [](auto& a, auto& b) { return mul(a, b); }, fn::Mul{}, -3, 3);
  check_binary<T, T>("div", [](auto& a, auto& b) { return div(a, b); }, fn::Div{}, 0.5, 3);
  check_binary<T, T>("div floor", [](auto& a, auto& b) { return div(a, b, "floor"); },
                     fn::DivFloor{}, -9, 9);
  check_binary<T, T>("pow", [](auto& a, auto& b) { return pow(a, b); }, fn::Pow{}, 0.1, 3);
  check_binary<T, T>("maximum", [](auto& a, auto& b) { return maximum(a, b); }, fn::Maximum{}, -3, 3);
  check_binary<T, T>("minimum", [](auto& a, auto& b) { return minimum(a, b); }, fn::Minimum{}, -3, 3);
  check_binary<T, bool>("lt", [](auto& a, auto& b) { return lt(a, b); }, fn::Lt{}, -3, 3);
  check_binary<T, bool>("eq", [](auto& a, auto& b) { return eq(a, b); }, fn::Eq{}, -1, 1);
}

TEST(PointwiseFusionContract, KernelsAreBitwiseTheirFunctors) {
  check_all<float>();
  check_all<double>();
  check_all<BFloat16>();
  check_all<Half>();
}

TEST(PointwiseFusionContract, ComputeTypes) {
  static_assert(std::is_same_v<compute_t<BFloat16>, float>);
  static_assert(std::is_same_v<compute_t<Half>, float>);
  static_assert(std::is_same_v<compute_t<double>, double>);
  static_assert(std::is_same_v<compute_t<int32_t>, int32_t>);
  EXPECT_EQ(functors::Add{}(1.0f, 2.0f, 3.0f), 7.0f);
  EXPECT_EQ(functors::powi<int64_t>(3, 4), 81);
  EXPECT_EQ(functors::DivFloor{}(-7, 2), -4);
  EXPECT_EQ(functors::DivTrunc{}(-7, 2), -3);
  EXPECT_EQ(functors::Where{}(false, 1.0f, 2.0f), 2.0f);
}

}  // namespace
}  // namespace symmflow::kernels
