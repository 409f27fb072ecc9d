#include "symmflow/kernels/gelu_erf.h"

// GCC 12 warns that _mm512_undefined_ps's value is used uninitialized where the
// 512-bit intrinsics that pass it inline (GCC bug 105593): off in its header only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#include <dnnl.hpp>

#include <cstring>
#include <unordered_map>

#include "symmflow/core/error.h"
#include "symmflow/kernels/onednn_threads.h"
#include "symmflow/kernels/simd.h"

namespace symmflow::kernels::vec {
namespace {

// oneDNN's constants, as bit patterns (its eltwise injector's table).
constexpr uint32_t kOneOverSqrt2 = 0x3f3504f3;  // 1/sqrt(2)
constexpr uint32_t kErfP = 0x3ea7ba05;          // A&S 7.1.26's p = 0.3275911
constexpr uint32_t kLog2e = 0x3fb8aa3b;
constexpr uint32_t kLn2 = 0x3f317218;
constexpr uint32_t kLnFltMax = 0x42b17218;  // exp's argument is clamped to these,
constexpr uint32_t kLnFltMin = 0xc2aeac50;  // and below the second its result is 0
// exp's polynomial on the reduced argument r, highest degree first, then 1.
constexpr uint32_t kExpPoly[] = {0x3c07cfce, 0x3d2b9d0d, 0x3e2aad40, 0x3efffee3, 0x3f7ffffb};
// A&S 7.1.26's a5 .. a1.
constexpr float kErfPoly[] = {1.061405429f, -1.453152027f, 1.421413741f, -0.284496736f, 0.254829592f};

float bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

// One width's vector operations: V a vector, M a lane mask. fma(a, b, c) is
// a * b + c rounded once (vfmadd), fnma(a, b, c) is c - a * b (vfnmadd); min and
// max return b where either is a NaN, as vminps/vmaxps with the constant second.
struct G8 {
  using V = __m256;
  using M = __m256;
  static constexpr int kLanes = 8;
  SF_AVX2 static V load(const float* p) { return _mm256_loadu_ps(p); }
  SF_AVX2 static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  SF_AVX2 static V set1(float v) { return _mm256_set1_ps(v); }
  SF_AVX2 static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  SF_AVX2 static V add(V a, V b) { return _mm256_add_ps(a, b); }
  SF_AVX2 static V div(V a, V b) { return _mm256_div_ps(a, b); }
  SF_AVX2 static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  SF_AVX2 static V fnma(V a, V b, V c) { return _mm256_fnmadd_ps(a, b, c); }
  SF_AVX2 static V min(V a, V b) { return _mm256_min_ps(a, b); }
  SF_AVX2 static V max(V a, V b) { return _mm256_max_ps(a, b); }
  SF_AVX2 static V floor(V a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
  SF_AVX2 static V bxor(V a, V b) { return _mm256_xor_ps(a, b); }
  SF_AVX2 static V band(V a, V b) { return _mm256_and_ps(a, b); }
  SF_AVX2 static M less(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_LT_OS); }
  // 2^n for the integral n in fx (a normal float's exponent field), 0 where m.
  SF_AVX2 static V pow2(V fx, M m) {
    __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(fx), _mm256_set1_epi32(127)), 23);
    return _mm256_blendv_ps(_mm256_castsi256_ps(e), _mm256_setzero_ps(), m);
  }
};

struct G16 {
  using V = __m512;
  using M = __mmask16;
  static constexpr int kLanes = 16;
  SF_AVX512 static V load(const float* p) { return _mm512_loadu_ps(p); }
  SF_AVX512 static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  SF_AVX512 static V set1(float v) { return _mm512_set1_ps(v); }
  SF_AVX512 static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  SF_AVX512 static V add(V a, V b) { return _mm512_add_ps(a, b); }
  SF_AVX512 static V div(V a, V b) { return _mm512_div_ps(a, b); }
  SF_AVX512 static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  SF_AVX512 static V fnma(V a, V b, V c) { return _mm512_fnmadd_ps(a, b, c); }
  SF_AVX512 static V min(V a, V b) { return _mm512_min_ps(a, b); }
  SF_AVX512 static V max(V a, V b) { return _mm512_max_ps(a, b); }
  SF_AVX512 static V floor(V a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
  // AVX-512F has no float and/xor (that is DQ): through integers, the same bits.
  SF_AVX512 static V bxor(V a, V b) {
    return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), _mm512_castps_si512(b)));
  }
  SF_AVX512 static V band(V a, V b) {
    return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(a), _mm512_castps_si512(b)));
  }
  SF_AVX512 static M less(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OS); }
  SF_AVX512 static V pow2(V fx, M m) {
    __m512i e = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(fx), _mm512_set1_epi32(127)), 23);
    return _mm512_castsi512_ps(_mm512_maskz_mov_epi32(__mmask16(~m), e));
  }
};

// gelu of U vectors at x into y, each step for all U before the next, so the
// compiler emits the U chains interleaved and the core overlaps their latencies.
// The steps, per element s, are oneDNN's (jit_uni_eltwise_injector's gelu_erf
// and exp, forward):
//   x = s * (1/sqrt 2);  e = exp(-(x * x));  t = 1 / (p * |x| + 1)
//   erf = sign(x) * ((-e * t) * poly(t) + 1);  h = s * 0.5;  gelu = erf * h + h
// with exp(a) = poly(r) * 2^n, n = floor(a * log2(e) + 0.5), r = a - n * ln 2, a
// clamped to [ln FLT_MIN, ln FLT_MAX], and 0 where a < ln FLT_MIN. h is s * 0.5
// as in oneDNN 2.6 (older versions took x * (1/sqrt 2), which rounds a
// subnormal s's half another way: the exhaustive check tells them apart).
#define SF_GELU_ERF_BLOCK(TARGET, NAME)                                                              \
  template <typename L, int U>                                                                       \
  TARGET inline void NAME(const float* in, float* out) {                                             \
    using V = typename L::V;                                                                         \
    const V rsqrt2 = L::set1(bits(kOneOverSqrt2)), one = L::set1(1.0f), sign = L::set1(-0.0f);       \
    const V lo = L::set1(bits(kLnFltMin)), hi = L::set1(bits(kLnFltMax));                            \
    V s[U], x[U], a[U], r[U], fx[U], p2[U], e[U], t[U], q[U];                                        \
    typename L::M m[U];                                                                              \
    for (int u = 0; u < U; ++u) s[u] = L::load(in + u * L::kLanes);                                  \
    for (int u = 0; u < U; ++u) x[u] = L::mul(s[u], rsqrt2);                                         \
    for (int u = 0; u < U; ++u) a[u] = L::bxor(L::mul(x[u], x[u]), sign);                            \
    for (int u = 0; u < U; ++u) m[u] = L::less(a[u], lo);                                            \
    for (int u = 0; u < U; ++u) r[u] = L::max(L::min(a[u], hi), lo);                                 \
    for (int u = 0; u < U; ++u)                                                                      \
      fx[u] = L::floor(L::add(L::mul(r[u], L::set1(bits(kLog2e))), L::set1(0.5f)));                  \
    for (int u = 0; u < U; ++u) r[u] = L::fnma(fx[u], L::set1(bits(kLn2)), r[u]);                    \
    for (int u = 0; u < U; ++u) p2[u] = L::pow2(fx[u], m[u]);                                        \
    for (int u = 0; u < U; ++u) e[u] = L::set1(bits(kExpPoly[0]));                                   \
    for (int k = 1; k < 5; ++k)                                                                      \
      for (int u = 0; u < U; ++u) e[u] = L::fma(e[u], r[u], L::set1(bits(kExpPoly[k])));             \
    for (int u = 0; u < U; ++u) e[u] = L::mul(L::fma(e[u], r[u], one), p2[u]);                       \
    for (int u = 0; u < U; ++u)                                                                      \
      t[u] = L::div(one, L::fma(L::set1(bits(kErfP)), L::band(x[u], L::set1(bits(0x7fffffff))), one)); \
    for (int u = 0; u < U; ++u) e[u] = L::mul(L::bxor(e[u], sign), t[u]);                            \
    for (int u = 0; u < U; ++u) q[u] = L::set1(kErfPoly[0]);                                         \
    for (int k = 1; k < 5; ++k)                                                                      \
      for (int u = 0; u < U; ++u) q[u] = L::fma(q[u], t[u], L::set1(kErfPoly[k]));                   \
    for (int u = 0; u < U; ++u) e[u] = L::bxor(L::fma(e[u], q[u], one), L::band(x[u], sign));        \
    for (int u = 0; u < U; ++u) {                                                                    \
      const V h = L::mul(s[u], L::set1(0.5f));                                                       \
      L::store(out + u * L::kLanes, L::fma(e[u], h, h));                                             \
    }                                                                                                \
  }                                                                                                  \
  template <typename L>                                                                              \
  TARGET void NAME##_map(const float* x, float* y, int64_t n) {                                      \
    constexpr int64_t k = L::kLanes, kU = 4;                                                         \
    int64_t i = 0;                                                                                   \
    for (; i + kU * k <= n; i += kU * k) NAME<L, kU>(x + i, y + i);                                  \
    for (; i + k <= n; i += k) NAME<L, 1>(x + i, y + i);                                             \
    if (i < n) {                                                                                     \
      float buf[k] = {};                                                                             \
      std::memcpy(buf, x + i, size_t(n - i) * sizeof(float));                                        \
      NAME<L, 1>(buf, buf);                                                                          \
      std::memcpy(y + i, buf, size_t(n - i) * sizeof(float));                                        \
    }                                                                                                \
  }
SF_GELU_ERF_BLOCK(SF_AVX2, gelu8)
SF_GELU_ERF_BLOCK(SF_AVX512, gelu16)
#undef SF_GELU_ERF_BLOCK

// oneDNN's primitive (ideep::eltwise_forward, algorithm eltwise_gelu_erf, alpha 0):
// a primitive per length, kept per thread (oneDNN's own cache would still hash
// the descriptor on every call).
void gelu_onednn(const float* x, float* y, int64_t n) {
  if (n <= 0) return;
  struct Prim {
    dnnl::memory::desc md;
    dnnl::eltwise_forward prim;
  };
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  thread_local dnnl::stream stream(engine);
  thread_local std::unordered_map<int64_t, Prim> prims;
  auto it = prims.find(n);
  if (it == prims.end()) {
    if (prims.size() >= 64) prims.clear();  // bounded: lengths seldom vary much
    dnnl::memory::desc md({n}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::a);
    dnnl::eltwise_forward::desc d(dnnl::prop_kind::forward_training, dnnl::algorithm::eltwise_gelu_erf,
                                  md, 0.f, 0.f);
    it = prims.emplace(n, Prim{md, dnnl::eltwise_forward(dnnl::eltwise_forward::primitive_desc(d, engine))})
             .first;
  }
  dnnl::memory src(it->second.md, engine, const_cast<float*>(x)), dst(it->second.md, engine, y);
  OneDnnThreads threads;
  try {
    it->second.prim.execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
  } catch (const dnnl::error& e) {
    fail("gelu: oneDNN's eltwise gelu_erf failed on {} elements: {} (status {}); "
         "check that libdnnl.so.2 is the one PyTorch uses", n, e.what(), int(e.status));
  }
}

}  // namespace

void gelu_erf(const float* x, float* y, int64_t n) {
  if (simd::avx512()) return gelu16_map<G16>(x, y, n);
  if (simd::avx2()) return gelu8_map<G8>(x, y, n);
  gelu_onednn(x, y, n);
}

bool gelu_erf_calls_onednn() { return !simd::avx2(); }

void gelu_erf_lanes(int lanes, const float* x, float* y, int64_t n) {
  SF_CHECK(lanes == 0 || lanes == 8 || lanes == 16, "vec::gelu_erf_lanes: {} lanes (0, 8 or 16)", lanes);
  if (lanes == 0) return gelu_onednn(x, y, n);
  if (lanes == 16) {
    SF_CHECK(simd::avx512(), "vec::gelu_erf_lanes: no AVX-512F on this CPU (or SYMMFLOW_SIMD=avx2)");
    return gelu16_map<G16>(x, y, n);
  }
  SF_CHECK(simd::avx2(), "vec::gelu_erf_lanes: no AVX2 + FMA on this CPU");
  gelu8_map<G8>(x, y, n);
}

}  // namespace symmflow::kernels::vec
