#include "symmflow/frontend/tensor_api.h"

#include "symmflow/frontend/tracer.h"

namespace symmflow {

using frontend::call_tensor;

namespace {
IValue s(const Scalar& v) { return v.to_ivalue(); }
IValue ints(const std::vector<int64_t>& v) { return IValue(v); }
IValue opt(const std::optional<Scalar>& v) { return v ? v->to_ivalue() : IValue(); }
}  // namespace

Tensor operator+(const Tensor& a, const Tensor& b) { return call_tensor("aten::add.Tensor", {a, b}); }
Tensor operator+(const Tensor& a, const Scalar& b) { return call_tensor("aten::add.Scalar", {a, s(b)}); }
Tensor operator+(const Scalar& a, const Tensor& b) { return call_tensor("aten::add.Scalar", {b, s(a)}); }
Tensor operator-(const Tensor& a, const Tensor& b) { return call_tensor("aten::sub.Tensor", {a, b}); }
Tensor operator-(const Tensor& a, const Scalar& b) { return call_tensor("aten::sub.Scalar", {a, s(b)}); }
Tensor operator-(const Scalar& a, const Tensor& b) { return call_tensor("aten::add.Scalar", {-b, s(a)}); }
Tensor operator*(const Tensor& a, const Tensor& b) { return call_tensor("aten::mul.Tensor", {a, b}); }
Tensor operator*(const Tensor& a, const Scalar& b) { return call_tensor("aten::mul.Scalar", {a, s(b)}); }
Tensor operator*(const Scalar& a, const Tensor& b) { return call_tensor("aten::mul.Scalar", {b, s(a)}); }
Tensor operator/(const Tensor& a, const Tensor& b) { return call_tensor("aten::div.Tensor", {a, b}); }
Tensor operator/(const Tensor& a, const Scalar& b) { return call_tensor("aten::div.Scalar", {a, s(b)}); }
Tensor operator-(const Tensor& a) { return call_tensor("aten::neg", {a}); }

Tensor& operator+=(Tensor& a, const Tensor& b) { return call_tensor("aten::add_.Tensor", {a, b}), a; }
Tensor& operator+=(Tensor& a, const Scalar& b) { return call_tensor("aten::add_.Scalar", {a, s(b)}), a; }
Tensor& operator-=(Tensor& a, const Tensor& b) { return call_tensor("aten::sub_.Tensor", {a, b}), a; }
Tensor& operator-=(Tensor& a, const Scalar& b) { return call_tensor("aten::sub_.Scalar", {a, s(b)}), a; }
Tensor& operator*=(Tensor& a, const Tensor& b) { return call_tensor("aten::mul_.Tensor", {a, b}), a; }
Tensor& operator*=(Tensor& a, const Scalar& b) { return call_tensor("aten::mul_.Scalar", {a, s(b)}), a; }
Tensor& operator/=(Tensor& a, const Tensor& b) { return call_tensor("aten::div_.Tensor", {a, b}), a; }
Tensor& operator/=(Tensor& a, const Scalar& b) { return call_tensor("aten::div_.Scalar", {a, s(b)}), a; }

#define SF_COMPARISON(op, name)                                                                         \
  Tensor operator op(const Tensor& a, const Tensor& b) { return call_tensor("aten::" name ".Tensor", {a, b}); } \
  Tensor operator op(const Tensor& a, const Scalar& b) { return call_tensor("aten::" name ".Scalar", {a, s(b)}); }
SF_COMPARISON(<, "lt")
SF_COMPARISON(<=, "le")
SF_COMPARISON(>, "gt")
SF_COMPARISON(>=, "ge")
SF_COMPARISON(==, "eq")
SF_COMPARISON(!=, "ne")
#undef SF_COMPARISON

Tensor exp(const Tensor& x) { return call_tensor("aten::exp", {x}); }
Tensor log(const Tensor& x) { return call_tensor("aten::log", {x}); }
Tensor sqrt(const Tensor& x) { return call_tensor("aten::sqrt", {x}); }
Tensor tanh(const Tensor& x) { return call_tensor("aten::tanh", {x}); }
Tensor relu(const Tensor& x) { return call_tensor("aten::relu", {x}); }
Tensor gelu(const Tensor& x) { return call_tensor("aten::gelu", {x}); }
Tensor maximum(const Tensor& a, const Tensor& b) { return call_tensor("aten::maximum", {a, b}); }
Tensor minimum(const Tensor& a, const Tensor& b) { return call_tensor("aten::minimum", {a, b}); }
Tensor where(const Tensor& c, const Tensor& a, const Tensor& b) { return call_tensor("aten::where.self", {c, a, b}); }
Tensor clamp(const Tensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi) {
  return call_tensor("aten::clamp", {x, opt(lo), opt(hi)});
}

Tensor sum(const Tensor& x) { return call_tensor("aten::sum", {x}); }
Tensor sum(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return call_tensor("aten::sum.dim_IntList", {x, ints(dims), keepdim});
}
Tensor mean(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return call_tensor("aten::mean.dim", {x, ints(dims), keepdim});
}
Tensor amax(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return call_tensor("aten::amax", {x, ints(dims), keepdim});
}
Tensor softmax(const Tensor& x, int64_t dim) { return call_tensor("aten::softmax.int", {x, dim}); }
Tensor matmul(const Tensor& a, const Tensor& b) { return call_tensor("aten::matmul", {a, b}); }
Tensor mm(const Tensor& a, const Tensor& b) { return call_tensor("aten::mm", {a, b}); }

Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  return call_tensor("aten::slice.Tensor", {x, dim, start, end, step});
}
Tensor select(const Tensor& x, int64_t dim, int64_t index) { return call_tensor("aten::select.int", {x, dim, index}); }
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  return call_tensor("aten::narrow", {x, dim, start, length});
}
Tensor view(const Tensor& x, const std::vector<int64_t>& shape) { return call_tensor("aten::view", {x, ints(shape)}); }
Tensor transpose(const Tensor& x, int64_t d0, int64_t d1) { return call_tensor("aten::transpose.int", {x, d0, d1}); }
Tensor unsqueeze(const Tensor& x, int64_t dim) { return call_tensor("aten::unsqueeze", {x, dim}); }
Tensor clone(const Tensor& x) { return call_tensor("aten::clone", {x}); }
Tensor contiguous(const Tensor& x) { return call_tensor("aten::contiguous", {x}); }
Tensor cat(const std::vector<Tensor>& xs, int64_t dim) { return call_tensor("aten::cat", {IValue(xs), dim}); }
Tensor copy_(const Tensor& dst, const Tensor& src) { return call_tensor("aten::copy_", {dst, src}); }
Tensor fill_(const Tensor& dst, const Scalar& v) { return call_tensor("aten::fill_.Scalar", {dst, s(v)}); }

Tensor zeros(const std::vector<int64_t>& shape, DType dtype) {
  return call_tensor("aten::zeros", {ints(shape)}, {{"dtype", dtype}});
}
Tensor ones(const std::vector<int64_t>& shape, DType dtype) {
  return call_tensor("aten::ones", {ints(shape)}, {{"dtype", dtype}});
}
Tensor full(const std::vector<int64_t>& shape, const Scalar& value, DType dtype) {
  return call_tensor("aten::full", {ints(shape), s(value)}, {{"dtype", dtype}});
}
Tensor empty(const std::vector<int64_t>& shape, DType dtype) {
  return call_tensor("aten::empty.memory_format", {ints(shape)}, {{"dtype", dtype}});
}
Tensor arange(const Scalar& end, DType dtype) { return call_tensor("aten::arange", {s(end)}, {{"dtype", dtype}}); }
Tensor randn(const std::vector<int64_t>& shape, int64_t seed, DType dtype) {
  return call_tensor("aten::randn", {ints(shape)}, {{"seed", seed}, {"dtype", dtype}});
}

}  // namespace symmflow
