// Factories: new tensors (contiguous unless strides are given) from the thread's
// current allocator. Every
// factory takes a trailing `meta` flag: when true it returns a meta tensor of the
// same type (its Meta kernel) and still validates its arguments.
//
// Random tensors are counter-based, so element i depends only on (seed, i): the
// same on every rank, in eager and compiled mode, for any shape with that numel.
//   splitmix64(x): z = x + 0x9E3779B97F4A7C15;
//                  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
//                  z = (z ^ (z >> 27)) * 0x94D049BB133111EB;  return z ^ (z >> 31)
//   key          = splitmix64(seed)
//   bits(c)      = splitmix64(key + c)                         (wrapping u64 add)
//   rand[i]      = (bits(i) >> (64 - p)) * 2^-p, with p the dtype's significand
//                  bits (f64 53, f32 24, f16 11, bf16 8): exactly representable,
//                  so always in [0, 1)
//   randn[i]     = sqrt(-2 ln u1) * cos(2 pi u2) in double, then rounded to the
//                  dtype (through float for bf16/f16), where
//                  u1 = ((bits(2i) >> 11) + 1) * 2^-53 in (0, 1],
//                  u2 =  (bits(2i+1) >> 11)    * 2^-53 in [0, 1)     (Box-Muller)
//   randint[i]   = low + bits(i) mod (high - low)   (modulo bias < (high-low)/2^64)
//
//   Tensor x = randn({4, 8}, DType::f32, /*seed=*/42);
//   Tensor r = arange(0, 10, 3);   // i64 {0, 3, 6, 9}
#pragma once
#include <cstdint>
#include <optional>

#include "symmflow/core/scalar.h"
#include "symmflow/core/tensor.h"

namespace symmflow::kernels {

Tensor empty(const Shape& shape, DType dtype = DType::f32, bool meta = false);
// A tensor of `shape` with `strides` (non-negative) over one fresh allocation of
// the elements it spans (numel for a dense layout): a compiled program's planned
// buffer (TensorType::storage_bytes) is exactly what it asks for.
Tensor empty_strided(const Shape& shape, const Shape& strides, DType dtype, bool meta = false);
// PyTorch's empty_like(t) (preserve_format): t's strides when t is non-overlapping
// and dense, else t's dims in its memory order made dense (core/layout.h); meta
// when t is.
Tensor empty_like_layout(const Tensor& t);
Tensor zeros(const Shape& shape, DType dtype = DType::f32, bool meta = false);
Tensor ones(const Shape& shape, DType dtype = DType::f32, bool meta = false);
// Default dtype from the value's kind, as PyTorch: bool -> bool, int -> i64, float -> f32.
Tensor full(const Shape& shape, const Scalar& value, std::optional<DType> dtype = std::nullopt,
            bool meta = false);
// [start, end) by step; ceil((end - start) / step) elements. Default dtype: i64 when
// every argument is an integer (or bool), else f32. Values are start + i * step,
// computed in i64 (integer arguments) or double, then converted.
Tensor arange(const Scalar& end, std::optional<DType> dtype = std::nullopt, bool meta = false);
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step = Scalar(int64_t(1)),
              std::optional<DType> dtype = std::nullopt, bool meta = false);
// Standard normal (floating dtypes only).
Tensor randn(const Shape& shape, DType dtype = DType::f32, uint64_t seed = 0, bool meta = false);
// Uniform in [0, 1) (floating dtypes only).
Tensor rand(const Shape& shape, DType dtype = DType::f32, uint64_t seed = 0, bool meta = false);
// Uniform integers in [low, high) (any dtype except bool; requires low < high).
Tensor randint(int64_t low, int64_t high, const Shape& shape, DType dtype = DType::i64,
               uint64_t seed = 0, bool meta = false);

// The generator above, exposed for tests and for kernels that need the same bits.
uint64_t splitmix64(uint64_t x);

}  // namespace symmflow::kernels
