// f32 gelu(x, approximate="none") with the bits of oneDNN's eltwise gelu_erf, the
// primitive PyTorch 1.13's f32 gelu runs on contiguous tensors (ideep; Debian
// links the same libdnnl.so.2). oneDNN's JIT kernel computes one vector at a
// time, a chain of about 40 dependent instructions with a division in it, so its
// throughput is bound by latency; the same instruction sequence written here with
// intrinsics runs four vectors side by side: 0.28 ns per element against
// oneDNN's 0.44 (64K, AVX-512; docs/performance.md, "Round 8").
// The sequence is oneDNN's: Abramowitz and Stegun's erf (7.1.26) around oneDNN's
// own exp, every fused multiply-add where oneDNN has one and nowhere else, so an
// element's bits do not depend on the width (8 or 16 lanes) nor on which of the
// two computes it. vec_math_test.cc compares them on 17 million bit patterns;
// bench/gelu_erf.cc --exhaustive compares all 2^32 inputs (15 s).
//
// Without AVX2 + FMA at run time, oneDNN's primitive runs (its SSE4.1 kernel
// rounds a * b + c twice, so no code here could give its bits).
//
//   vec::gelu_erf(x, y, n);  // y[i] = gelu(x[i]), i < n; x == y is fine
#pragma once
#include <cstdint>

namespace symmflow::kernels::vec {

// y[i] = gelu(x[i]) for i < n (contiguous; x may equal y, nothing else may overlap).
void gelu_erf(const float* x, float* y, int64_t n);
// The same at a chosen width, for the tests and benchmarks that compare them:
// lanes 8 (AVX2 + FMA) or 16 (AVX-512F), or 0 for oneDNN's primitive itself.
// Error where the CPU lacks the width.
void gelu_erf_lanes(int lanes, const float* x, float* y, int64_t n);
// gelu_erf calls oneDNN's primitive here (no AVX2 + FMA): a few microseconds a
// call, so callers hand it longer runs (fused_block.h).
bool gelu_erf_calls_onednn();

}  // namespace symmflow::kernels::vec
