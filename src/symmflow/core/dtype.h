// DType: the element types of a Tensor, with bf16 and f16 as 2-byte storage types
// that convert to and from float with round-to-nearest-even (as PyTorch does).
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace symmflow {

enum class DType : uint8_t { f32, f64, bf16, f16, i32, i64, boolean };
inline constexpr int kNumDTypes = 7;

size_t element_size(DType t);
std::string_view dtype_name(DType t);  // "f32", "bf16", ... (the text IR spelling)
// Accepts the IR names and PyTorch's ("float32", "float", "bfloat16", "int64", ...).
bool parse_dtype(std::string_view s, DType* out);
bool is_floating(DType t);
bool is_integral(DType t);  // i32, i64 (not bool)
// PyTorch's promote_types lattice restricted to our dtypes.
DType promote_types(DType a, DType b);

struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  BFloat16(float f) : bits(from_float(f)) {}  // NOLINT: implicit like PyTorch
  operator float() const {                    // NOLINT
    uint32_t u = uint32_t(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  static uint16_t from_float(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;  // NaN stays a quiet NaN
    u += 0x7fffu + ((u >> 16) & 1u);                      // round to nearest even
    return uint16_t(u >> 16);
  }
};

struct Half {
  uint16_t bits = 0;
  Half() = default;
  Half(float f) : bits(from_float(f)) {}  // NOLINT
  operator float() const { return to_float(bits); }  // NOLINT
  static uint16_t from_float(float f);
  static float to_float(uint16_t h);
};

template <typename T> struct DTypeOf;
template <> struct DTypeOf<float> { static constexpr DType value = DType::f32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::f64; };
template <> struct DTypeOf<BFloat16> { static constexpr DType value = DType::bf16; };
template <> struct DTypeOf<Half> { static constexpr DType value = DType::f16; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::i32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::i64; };
template <> struct DTypeOf<bool> { static constexpr DType value = DType::boolean; };

// SF_DISPATCH(dtype, T, body): runs body with T bound to the C++ element type.
#define SF_DISPATCH_CASE(D, CT, ...) \
  case ::symmflow::DType::D: {       \
    using T = CT;                    \
    __VA_ARGS__;                     \
    break;                           \
  }
#define SF_DISPATCH(dtype, ...)                                                   \
  switch (dtype) {                                                                \
    SF_DISPATCH_CASE(f32, float, __VA_ARGS__)                                     \
    SF_DISPATCH_CASE(f64, double, __VA_ARGS__)                                    \
    SF_DISPATCH_CASE(bf16, ::symmflow::BFloat16, __VA_ARGS__)                     \
    SF_DISPATCH_CASE(f16, ::symmflow::Half, __VA_ARGS__)                          \
    SF_DISPATCH_CASE(i32, int32_t, __VA_ARGS__)                                   \
    SF_DISPATCH_CASE(i64, int64_t, __VA_ARGS__)                                   \
    SF_DISPATCH_CASE(boolean, bool, __VA_ARGS__)                                  \
  }

}  // namespace symmflow
