#include "symmflow/ops/meta_util.h"

namespace symmflow::ops {

Tensor empty_with_type(const Tensor& like, Shape sizes) {
  if (like.is_meta()) return Tensor::meta(std::move(sizes), like.dtype());
  return Tensor::empty(std::move(sizes), like.dtype());
}

Tensor empty_like(const Tensor& t) { return empty_with_type(t, t.sizes()); }

Shape gathered_shape(const Tensor& t, int64_t group_size, const char* op) {
  SF_CHECK(group_size >= 1, "{}: group_size must be >= 1, got {}", op, group_size);
  Shape s = t.sizes();
  if (s.empty()) s = {1};
  s[0] *= group_size;
  return s;
}

Shape scattered_shape(const Tensor& t, int64_t group_size, const char* op) {
  SF_CHECK(group_size >= 1, "{}: group_size must be >= 1, got {}", op, group_size);
  SF_CHECK(t.dim() >= 1, "{}: expected an input with at least one dimension, got {}", op,
           t.type_string());
  Shape s = t.sizes();
  SF_CHECK(s[0] % group_size == 0,
           "{}: dimension 0 of the input ({}) must be divisible by group_size {}", op,
           t.type_string(), group_size);
  s[0] /= group_size;
  return s;
}

void check_out(const Tensor& out, DType dtype, const Shape& shape, const char* op,
               const char* arg) {
  SF_CHECK(out.dtype() == dtype && out.sizes() == shape, "{}: expected {} to be {}{}, got {}", op,
           arg, dtype_name(dtype), shape_to_string(shape), out.type_string());
}

void check_reduce_op(const std::string& op, const char* where) {
  static const char* kOps[] = {"sum", "avg", "max", "min", "product"};
  for (const char* k : kOps)
    if (op == k) return;
  fail("{}: unknown reduce_op \"{}\" (expected sum, avg, max, min or product)", where, op);
}

}  // namespace symmflow::ops
