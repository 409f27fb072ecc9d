#include "symmflow/core/dtype.h"

#include "symmflow/core/error.h"

namespace symmflow {

size_t element_size(DType t) {
  switch (t) {
    case DType::f32: return 4;
    case DType::f64: return 8;
    case DType::bf16: return 2;
    case DType::f16: return 2;
    case DType::i32: return 4;
    case DType::i64: return 8;
    case DType::boolean: return 1;
  }
  fail("element_size: bad dtype {}", int(t));
}

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "f32";
    case DType::f64: return "f64";
    case DType::bf16: return "bf16";
    case DType::f16: return "f16";
    case DType::i32: return "i32";
    case DType::i64: return "i64";
    case DType::boolean: return "bool";
  }
  return "?";
}

bool parse_dtype(std::string_view s, DType* out) {
  struct Name { std::string_view n; DType t; };
  static constexpr Name names[] = {
      {"f32", DType::f32},   {"float32", DType::f32},  {"float", DType::f32},
      {"f64", DType::f64},   {"float64", DType::f64},  {"double", DType::f64},
      {"bf16", DType::bf16}, {"bfloat16", DType::bf16},
      {"f16", DType::f16},   {"float16", DType::f16},  {"half", DType::f16},
      {"i32", DType::i32},   {"int32", DType::i32},    {"int", DType::i32},
      {"i64", DType::i64},   {"int64", DType::i64},    {"long", DType::i64},
      {"bool", DType::boolean}};
  for (const auto& n : names)
    if (n.n == s) { *out = n.t; return true; }
  return false;
}

bool is_floating(DType t) {
  return t == DType::f32 || t == DType::f64 || t == DType::bf16 || t == DType::f16;
}
bool is_integral(DType t) { return t == DType::i32 || t == DType::i64; }

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::boolean) return b;
  if (b == DType::boolean) return a;
  if (is_integral(a) && is_integral(b)) return DType::i64;
  if (is_integral(a)) return b;  // int with float: the float wins
  if (is_integral(b)) return a;
  // Both floating and different.
  if (a == DType::f64 || b == DType::f64) return DType::f64;
  if (a == DType::f32 || b == DType::f32) return DType::f32;
  return DType::f32;  // bf16 with f16, as PyTorch
}

uint16_t Half::from_float(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx > 0x7f800000u) return uint16_t(sign | 0x7e00u);  // NaN
  if (absx >= 0x477ff000u) return uint16_t(sign | 0x7c00u);   // overflow -> inf
  if (absx < 0x38800000u) {                                  // subnormal or zero
    // Scale into the subnormal range with float arithmetic: exact rounding (RNE).
    float af;
    std::memcpy(&af, &absx, 4);
    float scaled = af * 16777216.0f;  // 2^24: one f16 subnormal ulp becomes 1.0
    uint32_t r = uint32_t(__builtin_nearbyintf(scaled));
    return uint16_t(sign | r);
  }
  uint32_t mant = absx & 0x7fffffu;
  uint32_t exp = (absx >> 23) - 127 + 15;
  uint32_t h = (exp << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // RNE, may carry into exp
  return uint16_t(sign | h);
}

float Half::to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t u;
  if (exp == 0) {
    if (mant == 0) {
      u = sign;
    } else {  // subnormal: value = mant * 2^-24
      float f = float(mant) * (1.0f / 16777216.0f);
      std::memcpy(&u, &f, 4);
      u |= sign;
    }
  } else if (exp == 31) {
    u = sign | 0x7f800000u | (mant << 13);
  } else {
    u = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

}  // namespace symmflow
