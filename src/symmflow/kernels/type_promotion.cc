#include "symmflow/kernels/type_promotion.h"

#include <fmt/format.h>

#include <cmath>
#include <string>

namespace symmflow::kernels {

namespace {

std::optional<DType> promote(std::optional<DType> a, DType b) {
  return a ? promote_types(*a, b) : b;
}

int category(DType t) { return t == DType::boolean ? 0 : is_integral(t) ? 1 : 2; }

// PyTorch's combine_categories: `lower` only matters when it is of a higher category.
std::optional<DType> combine(std::optional<DType> higher, std::optional<DType> lower) {
  if (!higher) return lower;
  if (!lower) return higher;
  if (category(*lower) > category(*higher)) return promote_types(*higher, *lower);
  return higher;
}

}  // namespace

ResultType& ResultType::add(const Tensor& t) {
  if (t.dim() > 0) dim_ = promote(dim_, t.dtype());
  else zero_dim_ = promote(zero_dim_, t.dtype());
  return *this;
}

ResultType& ResultType::add(const Scalar& s) {
  wrapped_ = promote(wrapped_, scalar_dtype(s));
  return *this;
}

DType ResultType::get() const {
  auto r = combine(dim_, combine(zero_dim_, wrapped_));
  SF_CHECK(r.has_value(), "result_type: no operands");
  return *r;
}

DType result_type(std::initializer_list<Operand> operands) {
  ResultType r;
  for (const Operand& o : operands) r.add(o);
  return r.get();
}

DType scalar_dtype(const Scalar& s) {
  if (s.is_bool()) return DType::boolean;
  if (s.is_integral()) return DType::i64;
  return kDefaultFloat;
}

bool can_cast(DType from, DType to) {
  if (is_floating(from) && !is_floating(to)) return false;
  if (from != DType::boolean && to == DType::boolean) return false;
  return true;
}

void check_can_cast(std::string_view op, DType from, DType to) {
  SF_CHECK(can_cast(from, to), "{}: result type {} can't be cast to the desired output type {}",
           op, dtype_name(from), dtype_name(to));
}

DType to_floating(DType t) { return is_floating(t) ? t : kDefaultFloat; }

void check_scalar_fits(std::string_view op, const Scalar& s, DType dtype) {
  // c10's overflows<To, From>(): a bool never overflows, an integer only by range,
  // a double by range or (for integer targets) by being NaN or infinite.
  if (dtype == DType::boolean || dtype == DType::f64 || s.is_bool()) return;
  double lo = 0, hi = 0;
  const char* ctype = "";
  switch (dtype) {
    case DType::i32: lo = -2147483648.0, hi = 2147483647.0, ctype = "int"; break;
    // 2^63: PyTorch compares against double(INT64_MAX), which rounds up to it.
    case DType::i64: lo = -9223372036854775808.0, hi = 9223372036854775808.0, ctype = "int64_t"; break;
    case DType::f16: hi = 65504.0, ctype = "at::Half"; break;
    case DType::bf16: hi = 0x1.fep127, ctype = "at::BFloat16"; break;      // 3.3895314e38
    case DType::f32: hi = 0x1.fffffep127, ctype = "float"; break;          // FLT_MAX
    case DType::f64: case DType::boolean: return;
  }
  if (is_floating(dtype)) lo = -hi;
  bool overflows;
  if (s.is_integral()) {
    const int64_t v = s.to_int();
    overflows = dtype == DType::i64 ? false : double(v) < lo || double(v) > hi;
  } else {
    const double v = s.to_double();
    if (std::isinf(v) && is_floating(dtype)) overflows = false;
    else overflows = std::isnan(v) ? !is_floating(dtype) : v < lo || v > hi;
  }
  const std::string value = s.is_integral() ? fmt::format("{}", s.to_int()) : fmt::format("{}", s.to_double());
  SF_CHECK(!overflows, "{}: value cannot be converted to type {} without overflow ({} as {})", op,
           ctype, value, dtype_name(dtype));
}

}  // namespace symmflow::kernels
