#include "symmflow/exec/bitwise_diff.h"

#include <fmt/format.h>

#include <cstring>

#include "symmflow/kernels/copy.h"

namespace symmflow::exec {

std::string element_text(const Tensor& c, int64_t i) {
  const char* p = static_cast<const char*>(c.data_ptr()) + i * int64_t(c.itemsize());
  switch (c.dtype()) {
    case DType::f32: { float x; std::memcpy(&x, p, 4); return fmt::format("{}", x); }
    case DType::f64: { double x; std::memcpy(&x, p, 8); return fmt::format("{}", x); }
    case DType::bf16: { BFloat16 x; std::memcpy(&x, p, 2); return fmt::format("{}", float(x)); }
    case DType::f16: { Half x; std::memcpy(&x, p, 2); return fmt::format("{}", float(x)); }
    case DType::i32: { int32_t x; std::memcpy(&x, p, 4); return fmt::format("{}", x); }
    case DType::i64: { int64_t x; std::memcpy(&x, p, 8); return fmt::format("{}", x); }
    case DType::boolean: return *p ? "true" : "false";
  }
  return "?";
}

std::string first_bitwise_difference(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.sizes() != b.sizes())
    return fmt::format("types differ: eager {}, compiled {}", a.type_string(), b.type_string());
  Tensor ca = kernels::clone(a), cb = kernels::clone(b);
  const size_t item = a.itemsize();
  const char* pa = static_cast<const char*>(ca.data_ptr());
  const char* pb = static_cast<const char*>(cb.data_ptr());
  for (int64_t i = 0; i < a.numel(); ++i)
    if (std::memcmp(pa + i * int64_t(item), pb + i * int64_t(item), item) != 0)
      return fmt::format("index {}: eager {}, compiled {}", i, element_text(ca, i), element_text(cb, i));
  return "";
}

}  // namespace symmflow::exec
