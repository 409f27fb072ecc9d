// Vectorized transcendental functions from SLEEF, the library PyTorch's CPU
// kernels call. Debian's PyTorch 1.13 runs its AVX2 kernels ("CPU capability
// usage: AVX2"), which call SLEEF's AVX2 u10 variants (1.0 ulp): exp, log, log2,
// log1p, expm1, sin, cos, tanh. Here the same variants, so these ops agree with
// PyTorch's vectorized loop bit for bit; sigmoid and silu are PyTorch's
// vectorized formulas around them (1 / (1 + exp(-x)), x / (1 + exp(-x))), erf
// being SLEEF's erf u10 as PyTorch's erf op. f32 gelu is what PyTorch's f32 gelu
// runs on contiguous tensors: oneDNN's eltwise gelu_erf (its own erf, about 5x
// cheaper than SLEEF's), bitwise, in gelu_erf.h's code, four vectors at a time;
// f64 gelu is x * 0.5 * (1 + erf(x * M_SQRT1_2)) on SLEEF's erf (PyTorch's
// GeluKernelImpl).
//
// sin and cos are SLEEF's deterministic ("finz") variants, which choose the
// argument reduction per lane: the plain ones choose it per vector, so a lane of
// 125 or more (f32), an infinity or a NaN changed its neighbours' last bit, as it
// does in PyTorch. Vectors of small lanes give PyTorch's bits.
//
// On a CPU with AVX-512F, f32 runs in 16 lanes where SLEEF's 16-lane function
// gives the 8-lane one's bits (vec_math.cc, F16): the results above hold.
//
// Every element goes through the same 8-lane (f32) or 4-lane (f64) call wherever
// it sits (a tail is padded to a full vector; apply() is a map of one), so an
// element's result depends only on its value: not on the tensor's size, layout or
// alignment, not on eager vs compiled, not on the rank. Without AVX2 and FMA at
// run time every call falls back to the std:: function (the same on all ranks of
// one machine); f32 gelu then runs oneDNN's primitive itself.
//
//   vec::map(vec::Fn::exp, x, y, n);           // y[i] = exp(x[i]), i < n; x == y is fine
//   float e = vec::apply(vec::Fn::exp, 1.0f);  // the same bits as map on that element
#pragma once
#include <cstdint>

namespace symmflow::kernels::vec {

enum class Fn : uint8_t { exp, log, log2, log1p, expm1, sin, cos, tanh, erf, sigmoid, silu, gelu };

// y[i] = f(x[i]) for i < n (contiguous; x may equal y, nothing else may overlap).
void map(Fn f, const float* x, float* y, int64_t n);
void map(Fn f, const double* x, double* y, int64_t n);
float apply(Fn f, float x);
double apply(Fn f, double x);
// SLEEF's AVX2 path is in use (false: the std:: fallback).
bool simd();
// f runs on f32 in 16 lanes (AVX-512F) here: the CPU has it, SYMMFLOW_SIMD does
// not say avx2, and 16 lanes give f's 8-lane bits (every f: log and log2 with
// their NaNs made the 8 lanes' one).
bool wide(Fn f);
// map at a chosen width, 8 (AVX2) or 16 (AVX-512F, where wide(f)): for the tests
// that compare the two. Error where the CPU lacks it.
void map_lanes(int lanes, Fn f, const float* x, float* y, int64_t n);

}  // namespace symmflow::kernels::vec
