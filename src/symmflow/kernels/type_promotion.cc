#include "symmflow/kernels/type_promotion.h"

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

}  // namespace symmflow::kernels
