// The per-element functions of the pointwise ops, on the *compute type*: float for
// f32/bf16/f16 (bf16/f16 load to float, compute, round once on store, as PyTorch's
// CPU kernels do), double for f64, the integer itself for i32/i64, bool for bool.
//
// The eager kernels (pointwise.h) call exactly these functors, and the fused-kernel
// pass calls the same ones: with -ffp-contract=off, fused results are bitwise equal
// to eager. Keep them header-only, inline and free of side effects.
//
//   float y = functors::Gelu{}(x);                        // one element of gelu(x)
//   BFloat16 r = from_compute<BFloat16>(functors::Add{}(to_compute(a), to_compute(b), 1.0f));
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "symmflow/core/dtype.h"
#include "symmflow/kernels/vec_math.h"

namespace symmflow::kernels {

template <typename T> struct ComputeOf { using type = T; };
template <> struct ComputeOf<BFloat16> { using type = float; };
template <> struct ComputeOf<Half> { using type = float; };
// The type a T element is computed in.
template <typename T> using compute_t = typename ComputeOf<T>::type;

template <typename T>
inline compute_t<T> to_compute(T v) { return static_cast<compute_t<T>>(v); }
// Stores a compute value as element type T (bf16/f16: one round-to-nearest-even).
template <typename T, typename C>
inline T from_compute(C v) { return T(v); }

namespace functors {

namespace detail {
template <typename T>
inline constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;
// Integer arithmetic wraps around (two's complement), as PyTorch's does in practice;
// done in unsigned so it is not undefined behaviour.
template <typename T> inline T add(T a, T b) {
  if constexpr (is_int_v<T>) return T(std::make_unsigned_t<T>(a) + std::make_unsigned_t<T>(b));
  else if constexpr (std::is_same_v<T, bool>) return a || b;
  else return a + b;
}
template <typename T> inline T mul(T a, T b) {
  if constexpr (is_int_v<T>) return T(std::make_unsigned_t<T>(a) * std::make_unsigned_t<T>(b));
  else if constexpr (std::is_same_v<T, bool>) return a && b;
  else return a * b;
}
template <typename T> inline T neg(T a) {
  if constexpr (is_int_v<T>) return T(std::make_unsigned_t<T>(0) - std::make_unsigned_t<T>(a));
  else return -a;
}
}  // namespace detail

// ---- binary arithmetic --------------------------------------------------------

// a + alpha * b (PyTorch's add; sub is add with -alpha).
struct Add {
  template <typename T> T operator()(T a, T b, T alpha) const {
    return detail::add(a, detail::mul(alpha, b));
  }
};
// a - alpha * b; equals Add with -alpha bitwise (IEEE a + (-c) == a - c).
struct Sub {
  template <typename T> T operator()(T a, T b, T alpha) const {
    return detail::add(a, detail::neg(detail::mul(alpha, b)));
  }
};
struct Mul {
  template <typename T> T operator()(T a, T b) const { return detail::mul(a, b); }
};
// True division, on floating compute types (integers are promoted before).
struct Div {
  template <typename T> T operator()(T a, T b) const { return a / b; }
};
// Division rounded toward zero. Integer b == 0 is rejected by the kernel before.
struct DivTrunc {
  template <typename T> T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) return std::trunc(a / b);
    else return b == T(-1) ? detail::neg(a) : T(a / b);  // -1: avoid INT_MIN / -1 trap
  }
};
// Division rounded toward -inf, Python's //, with PyTorch's float algorithm.
struct DivFloor {
  template <typename T> T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (b == T(0)) return a / b;
      T mod = std::fmod(a, b);
      T div = (a - mod) / b;
      if (mod != T(0) && (b < T(0)) != (mod < T(0))) div -= T(1);
      if (div == T(0)) return std::copysign(T(0), a / b);
      T floordiv = std::floor(div);
      if (div - floordiv > T(0.5)) floordiv += T(1);
      return floordiv;
    } else {
      if (b == T(-1)) return detail::neg(a);
      T q = T(a / b), r = T(a % b);
      return (r != 0 && ((a < 0) != (b < 0))) ? T(q - 1) : q;
    }
  }
};

// Integer power with PyTorch's rules for negative exponents (1, -1 or 0).
template <typename T> inline T powi(T a, T b) {
  if (b < 0) {
    if (a == 1) return 1;
    if (a == -1) return (b % 2) ? T(-1) : T(1);
    return 0;
  }
  T r = 1;
  while (b) {
    if (b & 1) r = detail::mul(r, a);
    b /= 2;
    a = detail::mul(a, a);
  }
  return r;
}

// a ** b for tensor (or Scalar-base) exponents.
struct Pow {
  template <typename T> T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) return std::pow(a, b);
    else return powi(a, b);
  }
};

// x ** e for a Scalar exponent, as PyTorch's CPU kernel for each dtype (PowKernel.cpp,
// the same in 1.13 and 2.x). `mode`:
// - kFast (f32, f64; the integer types ignore it): the fast paths 2 (x*x), 3 (x*x*x),
//   -2 (1/(x*x)), 0.5 (sqrt), -0.5 (1/sqrt), -1 (1/x); otherwise pow in double (f32:
//   std::pow(float, double)).
// - kBFloat16 (bf16, on its float compute type, e already rounded to bf16): the same
//   fast paths, but PyTorch evaluates x*x*x and 1/(x*x) in BFloat16 arithmetic, so
//   x*x is rounded to bf16 before its second use; otherwise powf(x, e).
// - kStd (f16; bf16 when only the rounding made e 0.5, -0.5 or -1): powf(x, e), no
//   fast path. PyTorch has none for Half, so pow(-inf, 0.5) is inf there, where
//   sqrt gives nan for f32/f64/bf16, and pow(-0.0, 0.5) is +0.0, not -0.0.
struct PowScalar {
  enum Mode : unsigned char { kFast, kBFloat16, kStd };
  double e;
  Mode mode = kFast;
  template <typename T> T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (mode == kStd) return std::pow(x, T(e));
      if (e == 0.5) return std::sqrt(x);
      if (e == -0.5) return T(1) / std::sqrt(x);
      if (e == -1.0) return T(1) / x;
      if (e == 2.0) return x * x;
      if (mode == kBFloat16) {
        if (e == 3.0) return T(float(BFloat16(float(x * x)))) * x;
        if (e == -2.0) return T(1) / T(float(BFloat16(float(x * x))));
        return std::pow(x, T(e));
      }
      if (e == 3.0) return x * x * x;
      if (e == -2.0) return T(1) / (x * x);
      return T(std::pow(double(x), e));
    } else {
      return powi(x, T(e));
    }
  }
};

// NaN in either input gives NaN (PyTorch's maximum/minimum).
struct Maximum {
  template <typename T> T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (a != a || b != b) return std::numeric_limits<T>::quiet_NaN();
    }
    if constexpr (std::is_same_v<T, bool>) return a || b;
    else return a < b ? b : a;
  }
};
struct Minimum {
  template <typename T> T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (a != a || b != b) return std::numeric_limits<T>::quiet_NaN();
    }
    if constexpr (std::is_same_v<T, bool>) return a && b;
    else return b < a ? b : a;
  }
};

struct Where {
  template <typename T> T operator()(bool c, T a, T b) const { return c ? a : b; }
};

// ---- comparisons (result bool) ------------------------------------------------
struct Eq { template <typename T> bool operator()(T a, T b) const { return a == b; } };
struct Ne { template <typename T> bool operator()(T a, T b) const { return a != b; } };
struct Lt { template <typename T> bool operator()(T a, T b) const { return a < b; } };
struct Le { template <typename T> bool operator()(T a, T b) const { return a <= b; } };
struct Gt { template <typename T> bool operator()(T a, T b) const { return a > b; } };
struct Ge { template <typename T> bool operator()(T a, T b) const { return a >= b; } };

// ---- unary --------------------------------------------------------------------
struct Neg { template <typename T> T operator()(T x) const { return detail::neg(x); } };
struct Abs {
  template <typename T> T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>) return std::fabs(x);
    else if constexpr (std::is_same_v<T, bool>) return x;
    else return x < 0 ? detail::neg(x) : x;
  }
};
// The transcendental ones run on SLEEF (vec_math.h): kVec names the vector function
// the kernels map over whole runs, and one element through operator() gets the same
// bits. sigmoid(x) = 1 / (1 + exp(-x)); silu(x) = x * sigmoid(x), spelled as
// PyTorch's CPU kernel: x / (1 + exp(-x)); gelu(x, approximate="none") =
// x * 0.5 * (1 + erf(x / sqrt(2))). Floating compute types only.
#define SF_VEC_FUNCTOR(Name, fn)                                                \
  struct Name {                                                                 \
    static constexpr vec::Fn kVec = vec::Fn::fn;                                \
    template <typename T> T operator()(T x) const { return vec::apply(kVec, x); } \
  };
SF_VEC_FUNCTOR(Exp, exp)
SF_VEC_FUNCTOR(Log, log)
SF_VEC_FUNCTOR(Log2, log2)
SF_VEC_FUNCTOR(Log1p, log1p)
SF_VEC_FUNCTOR(Expm1, expm1)
SF_VEC_FUNCTOR(Sin, sin)
SF_VEC_FUNCTOR(Cos, cos)
SF_VEC_FUNCTOR(Tanh, tanh)
SF_VEC_FUNCTOR(Erf, erf)
SF_VEC_FUNCTOR(Sigmoid, sigmoid)
SF_VEC_FUNCTOR(Silu, silu)
SF_VEC_FUNCTOR(Gelu, gelu)
#undef SF_VEC_FUNCTOR
struct Sqrt { template <typename T> T operator()(T x) const { return std::sqrt(x); } };
struct Rsqrt { template <typename T> T operator()(T x) const { return T(1) / std::sqrt(x); } };
// & | ^ on integers and bool (bool stays bool).
struct BitAnd { template <typename T> T operator()(T a, T b) const { return T(a & b); } };
struct BitOr { template <typename T> T operator()(T a, T b) const { return T(a | b); } };
struct BitXor { template <typename T> T operator()(T a, T b) const { return T(a ^ b); } };
// Rounding: integers are already whole.
#define SF_ROUNDING_FUNCTOR(Name, fn)                                     \
  struct Name {                                                           \
    template <typename T> T operator()(T x) const {                       \
      if constexpr (std::is_floating_point_v<T>) return fn(x);            \
      else return x;                                                      \
    }                                                                     \
  };
SF_ROUNDING_FUNCTOR(Floor, std::floor)
SF_ROUNDING_FUNCTOR(Ceil, std::ceil)
SF_ROUNDING_FUNCTOR(Round, std::nearbyint)  // half to even, as PyTorch
SF_ROUNDING_FUNCTOR(Trunc, std::trunc)
#undef SF_ROUNDING_FUNCTOR
// (0 < x) - (x < 0): NaN and -0.0 give +0 (PyTorch 1.13); bool is itself.
struct Sign {
  template <typename T> T operator()(T x) const {
    if constexpr (std::is_same_v<T, bool>) return x;
    else return T(int(T(0) < x) - int(x < T(0)));
  }
};
struct Reciprocal { template <typename T> T operator()(T x) const { return T(1) / x; } };
// ~x on integers, logical not on bool.
struct BitwiseNot {
  template <typename T> T operator()(T x) const {
    if constexpr (std::is_same_v<T, bool>) return !x;
    else return T(~x);
  }
};
// max(x, 0) with NaN passing through and relu(-0.0) == -0.0 (PyTorch's clamp_min).
struct Relu { template <typename T> T operator()(T x) const { return x < T(0) ? T(0) : x; } };
// gelu(x, approximate="tanh"): 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))),
// term by term as PyTorch's CPU kernel (GeluKernelImpl; bf16/f16 in float, as 2.x).
// Its vectorized tanh (Sleef's tanh_u10) is exactly +-1 once |inner| passes
// 8.664339742 (float) or 18.714973875 (double), where std::tanh is still 1 ulp short
// of it; 1 + tanh then cancels to 0, so the far negative tail is -0.0 (bf16 -5.0625:
// -0.0, not -1.5e-7). The same saturation is applied here.
struct GeluTanh {
  template <typename T> T operator()(T x) const {
    const T beta = T(M_SQRT2 * M_2_SQRTPI * 0.5);
    const T kappa = T(0.044715);
    const T saturated = std::is_same_v<T, float> ? T(8.664339742f) : T(18.714973875);
    T cube = x * x * x;
    T inner = beta * (x + kappa * cube);
    T t = std::fabs(inner) > saturated ? std::copysign(T(1), inner) : std::tanh(inner);
    return T(0.5) * x * (T(1) + t);
  }
};
// Clamp to [lo, hi]; NaN passes through (PyTorch's clamp). A missing bound is
// -inf / +inf (or the integer limits) in the kernel.
struct Clamp {
  template <typename T> T operator()(T x, T lo, T hi) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (x != x) return x;
    }
    T y = x < lo ? lo : x;
    return hi < y ? hi : y;
  }
};

}  // namespace functors
}  // namespace symmflow::kernels
