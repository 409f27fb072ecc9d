#include "symmflow/kernels/vec_math.h"

#include <immintrin.h>
#include <sleef.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "symmflow/core/error.h"
#include "symmflow/kernels/gelu_erf.h"
#include "symmflow/kernels/simd.h"

// sleef.h declares its AVX2 functions only in code compiled for AVX (__AVX__).
// This file is compiled for plain x86-64 and calls them from functions marked
// target("avx2,fma"), after checking the CPU, so it declares the ones it uses
// (unless the build is for AVX already, as the fuzz build under clang is).
#ifndef __AVX__
extern "C" {
#define SF_SLEEF_F8(name) __m256 Sleef_##name##f8_u10avx2(__m256);
#define SF_SLEEF_D4(name) __m256d Sleef_##name##d4_u10avx2(__m256d);
#define SF_SLEEF_BOTH(name) SF_SLEEF_F8(name) SF_SLEEF_D4(name)
SF_SLEEF_BOTH(exp)
SF_SLEEF_BOTH(log)
SF_SLEEF_BOTH(log2)
SF_SLEEF_BOTH(log1p)
SF_SLEEF_BOTH(expm1)
SF_SLEEF_BOTH(tanh)
SF_SLEEF_BOTH(erf)
#undef SF_SLEEF_BOTH
#undef SF_SLEEF_D4
#undef SF_SLEEF_F8
// SLEEF's sin and cos choose their argument reduction per vector: one lane of
// 125 or more (f32; 15, f64), an infinity or a NaN sends all the lanes down the
// long path, and a small lane's last bit then depends on its neighbours, so on
// where a tensor's runs start (eager vs a fused block, a shard's offset).
// The "finz" variants (SLEEF's deterministic ones, FMA) choose per lane. On
// vectors of small lanes they give the plain ones' bits, which are PyTorch's
// (vec_math_test.cc checks the first property, tests/torch the second).
__m256 Sleef_finz_sinf8_u10avx2(__m256);
__m256 Sleef_finz_cosf8_u10avx2(__m256);
__m256d Sleef_finz_sind4_u10avx2(__m256d);
__m256d Sleef_finz_cosd4_u10avx2(__m256d);
}
#endif
// The 16-lane f32 functions (AVX-512F), called from SF_AVX512 code only.
#ifndef __AVX512F__
extern "C" {
#define SF_SLEEF_F16(name) SF_AVX512 __m512 Sleef_finz_##name##f16_u10avx512f(__m512);
SF_SLEEF_F16(log)
SF_SLEEF_F16(log2)
SF_SLEEF_F16(log1p)
SF_SLEEF_F16(expm1)
SF_SLEEF_F16(sin)
SF_SLEEF_F16(cos)
SF_SLEEF_F16(tanh)
SF_SLEEF_F16(erf)
#undef SF_SLEEF_F16
}
#endif

namespace symmflow::kernels::vec {
namespace {

// The AVX2 code (SF_AVX2, simd.h) is compiled for AVX2+FMA whatever the build's
// -march, and only called when the CPU has both (simd()). With -ffp-contract=off
// the arithmetic around SLEEF is IEEE add/mul/div, as PyTorch's intrinsics.

// One vector type's lanes and SLEEF calls: F8 for f32 (8 lanes), D4 for f64 (4).
// NAME, element T, vector V, lanes, intrinsic suffix (ps/pd), SLEEF suffix (f8/d4).
#define SF_LANES(NAME, T_, V_, LANES, S, F)                                                     \
  struct NAME {                                                                                 \
    using T = T_;                                                                               \
    using V = V_;                                                                               \
    static constexpr int kLanes = LANES;                                                        \
    SF_AVX2 static V load(const T* p) { return _mm256_loadu_##S(p); }                           \
    SF_AVX2 static void store(T* p, V v) { _mm256_storeu_##S(p, v); }                           \
    SF_AVX2 static V set1(T v) { return _mm256_set1_##S(v); }                                   \
    SF_AVX2 static V add(V a, V b) { return _mm256_add_##S(a, b); }                             \
    SF_AVX2 static V mul(V a, V b) { return _mm256_mul_##S(a, b); }                             \
    SF_AVX2 static V div(V a, V b) { return _mm256_div_##S(a, b); }                             \
    SF_AVX2 static V neg(V a) { return _mm256_xor_##S(a, _mm256_set1_##S(T(-0.0))); }           \
    SF_AVX2 static V exp(V x) { return Sleef_exp##F##_u10avx2(x); }                             \
    SF_AVX2 static V log(V x) { return Sleef_log##F##_u10avx2(x); }                             \
    SF_AVX2 static V log2(V x) { return Sleef_log2##F##_u10avx2(x); }                           \
    SF_AVX2 static V log1p(V x) { return Sleef_log1p##F##_u10avx2(x); }                         \
    SF_AVX2 static V expm1(V x) { return Sleef_expm1##F##_u10avx2(x); }                         \
    SF_AVX2 static V sin(V x) { return Sleef_finz_sin##F##_u10avx2(x); }                        \
    SF_AVX2 static V cos(V x) { return Sleef_finz_cos##F##_u10avx2(x); }                        \
    SF_AVX2 static V tanh(V x) { return Sleef_tanh##F##_u10avx2(x); }                           \
    SF_AVX2 static V erf(V x) { return Sleef_erf##F##_u10avx2(x); }                             \
  };
SF_LANES(F8, float, __m256, 8, ps, f8)
SF_LANES(D4, double, __m256d, 4, pd, d4)
#undef SF_LANES

// SLEEF's f32 exp (u10; its deterministic 16-lane Sleef_finz_expf16_u10avx512f,
// whose bits are the 8-lane Sleef_expf8_u10avx2's, PyTorch's) in symmflow's own
// code, with one change: x * 2^q is one vscalefps instead of SLEEF's ldexp (two
// multiplies by powers of two built with integer shifts and adds: 7
// instructions). Both round once: for the q this function reaches (-150..144)
// SLEEF's first multiply, by 2^(q >> 1), is exact, so the second rounds as
// scalef does, subnormal results and overflow included. Inlined, the compiler
// interleaves vectors (SLEEF's is a call per vector). Same bits as the 8-lane
// SLEEF on all 2^32 inputs (`build/dev/bench/sf_exp16 --exhaustive`); the
// constants are SLEEF's (ln 2 in two parts, the degree-5 polynomial).
// (The conversions and the scalef are the zero-masked forms with every lane
// set: the plain intrinsics pass GCC 12 an undefined vector it warns about.)
SF_AVX512 inline __m512 c16(uint32_t bits) { return _mm512_set1_ps(std::bit_cast<float>(bits)); }
SF_AVX512 inline __m512 exp16(__m512 x) {
  auto c = c16;
  constexpr __mmask16 all = 0xffff;
  const __m512 q =  // rint(x / ln 2), through integers as SLEEF (a NaN or a huge x gives INT_MIN)
      _mm512_maskz_cvtepi32_ps(all, _mm512_maskz_cvtps_epi32(all, _mm512_mul_ps(x, c(0x3fb8aa3b))));
  __m512 s = _mm512_fmadd_ps(q, c(0xbf317200), x);  // x - q ln 2, in two parts
  s = _mm512_fmadd_ps(q, c(0xb5bfbe8e), s);
  __m512 u = c(0x39502bda);
  u = _mm512_fmadd_ps(u, s, c(0x3ab696c9));
  u = _mm512_fmadd_ps(u, s, c(0x3c0888a6));
  u = _mm512_fmadd_ps(u, s, c(0x3d2aaa7a));
  u = _mm512_fmadd_ps(u, s, c(0x3e2aaaab));
  u = _mm512_fmadd_ps(u, s, c(0x3f000000));
  u = _mm512_add_ps(c(0x3f800000), _mm512_fmadd_ps(_mm512_mul_ps(s, s), u, s));
  u = _mm512_maskz_scalef_ps(all, u, q);
  // 0 below -104 (not for NaN: "not less than"), infinity above 100.
  u = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, c(0xc2d00000), _CMP_NLT_US), u);
  return _mm512_mask_mov_ps(u, _mm512_cmp_ps_mask(x, c(0x42c80000), _CMP_GT_OQ), c(0x7f800000));
}

// f32 in 16 lanes (AVX-512F), where the CPU has it: SLEEF's deterministic
// ("finz") functions give every f32 the bits of the 8-lane ones above, checked
// on all 2^32 inputs on an AMD EPYC with AVX-512 (docs/performance.md), at about
// half the time (exp over 64K elements: 13.5-17.9 us against 27.6-34.1); exp
// itself is exp16 above, SLEEF's algorithm inlined with one scalef.
// log and log2: every result that is a number has the 8 lanes' bits, but the
// NaNs differ (2,155,872,253 inputs: every negative one, every NaN but
// 0x7fc00000). The 8-lane ones, PyTorch's, return the one quiet NaN 0x7fc00000
// for all of them; so the 16-lane result with its NaN lanes set to that NaN
// is the 8 lanes' bits on all 2^32 inputs (sf_exp16 --exhaustive), at
// 0.36-0.38x the time of the 8 lanes (sf_exp16, log at 4K to 1M elements).
// f64 stays in 4 lanes: SLEEF's plain f64 exp is not its finz one.
SF_AVX512 inline __m512 quiet_nan_as_8_lanes(__m512 r) {
  return _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(r, r, _CMP_UNORD_Q), c16(0x7fc00000));
}
struct F16 {
  using T = float;
  using V = __m512;
  static constexpr int kLanes = 16;
  SF_AVX512 static V load(const T* p) { return _mm512_loadu_ps(p); }
  SF_AVX512 static void store(T* p, V v) { _mm512_storeu_ps(p, v); }
  SF_AVX512 static V set1(T v) { return _mm512_set1_ps(v); }
  SF_AVX512 static V add(V a, V b) { return _mm512_add_ps(a, b); }
  SF_AVX512 static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  SF_AVX512 static V div(V a, V b) { return _mm512_div_ps(a, b); }
  // The sign bit flipped, as F8's xor (AVX-512F has no float xor: through integers).
  SF_AVX512 static V neg(V a) {
    return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), _mm512_set1_epi32(int(0x80000000u))));
  }
  SF_AVX512 static V exp(V x) { return exp16(x); }
  SF_AVX512 static V log(V x) { return quiet_nan_as_8_lanes(Sleef_finz_logf16_u10avx512f(x)); }
  SF_AVX512 static V log2(V x) { return quiet_nan_as_8_lanes(Sleef_finz_log2f16_u10avx512f(x)); }
  SF_AVX512 static V log1p(V x) { return Sleef_finz_log1pf16_u10avx512f(x); }
  SF_AVX512 static V expm1(V x) { return Sleef_finz_expm1f16_u10avx512f(x); }
  SF_AVX512 static V sin(V x) { return Sleef_finz_sinf16_u10avx512f(x); }
  SF_AVX512 static V cos(V x) { return Sleef_finz_cosf16_u10avx512f(x); }
  SF_AVX512 static V tanh(V x) { return Sleef_finz_tanhf16_u10avx512f(x); }
  SF_AVX512 static V erf(V x) { return Sleef_finz_erff16_u10avx512f(x); }
};

// eval: f on one vector of lanes L; map_simd: y = f(x) over n elements, the
// tail through a padded vector (the same call as a full one). Written once and
// compiled twice, for each target: F8 and D4 code must not contain AVX-512
// instructions (AVX2-only CPUs), and F16's vectors need AVX-512F code around them.
#define SF_MAP_SIMD(TARGET, EVAL, MAP)                                                               \
  template <typename L, Fn F>                                                                        \
  TARGET inline typename L::V EVAL(typename L::V x) {                                                \
    using T = typename L::T;                                                                         \
    if constexpr (F == Fn::exp) return L::exp(x);                                                    \
    else if constexpr (F == Fn::log) return L::log(x);                                               \
    else if constexpr (F == Fn::log2) return L::log2(x);                                             \
    else if constexpr (F == Fn::log1p) return L::log1p(x);                                           \
    else if constexpr (F == Fn::expm1) return L::expm1(x);                                           \
    else if constexpr (F == Fn::sin) return L::sin(x);                                               \
    else if constexpr (F == Fn::cos) return L::cos(x);                                               \
    else if constexpr (F == Fn::tanh) return L::tanh(x);                                             \
    else if constexpr (F == Fn::erf) return L::erf(x);                                               \
    else if constexpr (F == Fn::sigmoid)                                                             \
      return L::div(L::set1(T(1)), L::add(L::set1(T(1)), L::exp(L::neg(x))));                       \
    else if constexpr (F == Fn::silu) return L::div(x, L::add(L::set1(T(1)), L::exp(L::neg(x))));   \
    else /* gelu: (x * 0.5) * (1 + erf(x * M_SQRT1_2)), PyTorch's GeluKernelImpl order */            \
      return L::mul(L::mul(x, L::set1(T(0.5))),                                                      \
                    L::add(L::set1(T(1)), L::erf(L::mul(x, L::set1(T(M_SQRT1_2))))));                \
  }                                                                                                  \
  template <typename L, Fn F>                                                                        \
  TARGET void MAP(const typename L::T* x, typename L::T* y, int64_t n) {                             \
    constexpr int64_t k = L::kLanes;                                                                 \
    int64_t i = 0;                                                                                   \
    for (; i + k <= n; i += k) L::store(y + i, EVAL<L, F>(L::load(x + i)));                          \
    if (i < n) {                                                                                     \
      typename L::T buf[k] = {};                                                                     \
      std::memcpy(buf, x + i, size_t(n - i) * sizeof(buf[0]));                                       \
      L::store(buf, EVAL<L, F>(L::load(buf)));                                                       \
      std::memcpy(y + i, buf, size_t(n - i) * sizeof(buf[0]));                                       \
    }                                                                                                \
  }
SF_MAP_SIMD(SF_AVX2, eval, map_simd)
SF_MAP_SIMD(SF_AVX512, eval_wide, map_simd_wide)
#undef SF_MAP_SIMD

// The fallback: the scalar formulas (pointwise_functors.h's before SLEEF).
template <typename T>
T eval_std(Fn f, T x) {
  switch (f) {
    case Fn::exp: return std::exp(x);
    case Fn::log: return std::log(x);
    case Fn::log2: return std::log2(x);
    case Fn::log1p: return std::log1p(x);
    case Fn::expm1: return std::expm1(x);
    case Fn::sin: return std::sin(x);
    case Fn::cos: return std::cos(x);
    case Fn::tanh: return std::tanh(x);
    case Fn::erf: return std::erf(x);
    case Fn::sigmoid: return T(1) / (T(1) + std::exp(-x));
    case Fn::silu: return x / (T(1) + std::exp(-x));
    case Fn::gelu: return x * T(0.5) * (T(1) + std::erf(x * T(M_SQRT1_2)));
  }
  return x;
}

template <typename L>
using MapFn = void (*)(const typename L::T*, typename L::T*, int64_t);

// Indexed by Fn.
template <typename L>
constexpr MapFn<L> kTable[] = {
    map_simd<L, Fn::exp>,   map_simd<L, Fn::log>,     map_simd<L, Fn::log2>,
    map_simd<L, Fn::log1p>, map_simd<L, Fn::expm1>,   map_simd<L, Fn::sin>,
    map_simd<L, Fn::cos>,   map_simd<L, Fn::tanh>,    map_simd<L, Fn::erf>,
    map_simd<L, Fn::sigmoid>, map_simd<L, Fn::silu>,  map_simd<L, Fn::gelu>};

// F16's, indexed by Fn: nullptr for gelu (f32 gelu is gelu_erf.h's, both widths).
constexpr MapFn<F16> kWideTable[] = {
    map_simd_wide<F16, Fn::exp>,   map_simd_wide<F16, Fn::log>,    map_simd_wide<F16, Fn::log2>,
    map_simd_wide<F16, Fn::log1p>, map_simd_wide<F16, Fn::expm1>,  map_simd_wide<F16, Fn::sin>,
    map_simd_wide<F16, Fn::cos>,   map_simd_wide<F16, Fn::tanh>,   map_simd_wide<F16, Fn::erf>,
    map_simd_wide<F16, Fn::sigmoid>, map_simd_wide<F16, Fn::silu>, nullptr};

template <typename L>
void map_any(Fn f, const typename L::T* x, typename L::T* y, int64_t n) {
  if (simd()) return kTable<L>[size_t(f)](x, y, n);
  for (int64_t i = 0; i < n; ++i) y[i] = eval_std(f, x[i]);
}

}  // namespace

bool simd() { return simd::avx2(); }
bool wide(Fn f) { return simd::avx512() && (kWideTable[size_t(f)] || f == Fn::gelu); }

void map(Fn f, const float* x, float* y, int64_t n) {
  if (f == Fn::gelu) return gelu_erf(x, y, n);
  if (wide(f)) return kWideTable[size_t(f)](x, y, n);
  map_any<F8>(f, x, y, n);
}
void map_lanes(int lanes, Fn f, const float* x, float* y, int64_t n) {
  SF_CHECK(lanes == 8 || lanes == 16, "vec::map_lanes: {} lanes (8 or 16)", lanes);
  if (f == Fn::gelu) return gelu_erf_lanes(lanes, x, y, n);
  if (lanes == 16) {
    SF_CHECK(wide(f), "vec::map_lanes: no 16-lane {}", int(f));
    return kWideTable[size_t(f)](x, y, n);
  }
  SF_CHECK(simd(), "vec::map_lanes: no AVX2 on this CPU");
  kTable<F8>[size_t(f)](x, y, n);
}
void map(Fn f, const double* x, double* y, int64_t n) { map_any<D4>(f, x, y, n); }
float apply(Fn f, float x) {
  map(f, &x, &x, 1);
  return x;
}
double apply(Fn f, double x) {
  map(f, &x, &x, 1);
  return x;
}

}  // namespace symmflow::kernels::vec
