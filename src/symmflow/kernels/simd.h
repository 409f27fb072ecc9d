// The kernels' AVX2 code paths, chosen at run time. The build targets plain
// x86-64 (SSE2: 4 floats per instruction) so that the binary runs anywhere;
// PyTorch dispatches its CPU kernels to AVX2 (8 floats) on this class of machine.
// simd::run(f) calls f in a clone compiled for AVX2 + FMA, with every call inside
// f inlined into it (`flatten`), so the vectorizer sees f's loops at 8 floats;
// on a CPU with AVX-512F, in a clone compiled for it (16 floats); the CPU is
// checked once. Which ISA runs never changes a result bit: the build
// has -ffp-contract=off (FMA instructions are never formed from a * b + c), and
// IEEE add, mul, div, sqrt, compare, min and max are exact in any width. Sums keep
// sum_order.h's order whatever the width.
//
//   simd::run([&] { for (int64_t i = 0; i < n; ++i) y[i] = x[i] + z[i]; });
//
// SF_AVX2 marks a function compiled for AVX2 + FMA (intrinsics, SLEEF's AVX2
// functions); call it only when simd::avx2() is true.
#pragma once

#define SF_AVX2 __attribute__((target("avx2,fma")))
// SF_AVX512 marks a function compiled for AVX-512F (run_avx512, SLEEF's 16-lane
// f32 functions in vec_math.cc); call it only when simd::avx512() is true.
#define SF_AVX512 __attribute__((target("avx512f,avx2,fma")))

namespace symmflow::kernels::simd {

// The CPU has AVX2 and FMA (the same answer on every rank of one machine).
bool avx2();
// The CPU (and the OS) has AVX-512F as well, and SYMMFLOW_SIMD does not say
// avx2 (which benchmarks and tests use to compare the two widths).
bool avx512();

template <typename F>
SF_AVX2 __attribute__((flatten, noinline)) void run_avx2(const F& f) {
  f();
}

template <typename F>
SF_AVX512 __attribute__((flatten, noinline)) void run_avx512(const F& f) {
  f();
}

template <typename F>
inline void run(const F& f) {
  if (avx512()) run_avx512(f);
  else if (avx2()) run_avx2(f);
  else f();
}

}  // namespace symmflow::kernels::simd
