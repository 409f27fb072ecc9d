// The user-facing tensor API: operators and functions on symmflow::Tensor with
// PyTorch's meaning, each one op of the library (aten::add, aten::mul, ...),
// called through frontend::call — so the same code runs eagerly or is traced
// by sf::compile. No function here has a tracing flag: whether a factory makes
// data or records a node depends only on whether a trace is running.
//
//   Tensor y = x * 2 + 1;            // aten::mul.Scalar, aten::add.Scalar
//   y += x;                          // aten::add_.Tensor (in place, as in PyTorch)
//   Tensor m = (y > 0.5);            // aten::gt.Scalar: a bool tensor
//   Tensor s = sum(y, {0});          // aten::sum.dim_IntList
//   Tensor z = zeros({4, 8});        // aten::zeros: data eagerly, a node in a trace
#pragma once
#include <optional>
#include <vector>

#include "symmflow/core/scalar.h"
#include "symmflow/core/tensor.h"

namespace symmflow {

// Arithmetic (aten::add/sub/mul/div, .Tensor and .Scalar), negation.
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, const Scalar& b);
Tensor operator+(const Scalar& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Scalar& b);
Tensor operator-(const Scalar& a, const Tensor& b);  // -b + a, exactly a - b
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Scalar& b);
Tensor operator*(const Scalar& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Scalar& b);
Tensor operator-(const Tensor& a);
// In place (aten::add_ ...): the tensor itself, written.
Tensor& operator+=(Tensor& a, const Tensor& b);
Tensor& operator+=(Tensor& a, const Scalar& b);
Tensor& operator-=(Tensor& a, const Tensor& b);
Tensor& operator-=(Tensor& a, const Scalar& b);
Tensor& operator*=(Tensor& a, const Tensor& b);
Tensor& operator*=(Tensor& a, const Scalar& b);
Tensor& operator/=(Tensor& a, const Tensor& b);
Tensor& operator/=(Tensor& a, const Scalar& b);
// Comparisons give bool tensors (aten::lt/le/gt/ge/eq/ne).
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, const Scalar& b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, const Scalar& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, const Scalar& b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, const Scalar& b);
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, const Scalar& b);
Tensor operator!=(const Tensor& a, const Tensor& b);
Tensor operator!=(const Tensor& a, const Scalar& b);

// Pointwise functions.
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor gelu(const Tensor& x);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max);

// Reductions, softmax, matmul.
Tensor sum(const Tensor& x);
Tensor sum(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim = false);
Tensor mean(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim = false);
Tensor amax(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim = false);
Tensor softmax(const Tensor& x, int64_t dim);
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor mm(const Tensor& a, const Tensor& b);

// Views (share storage) and copies.
Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
Tensor select(const Tensor& x, int64_t dim, int64_t index);
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);
Tensor view(const Tensor& x, const std::vector<int64_t>& shape);
Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1);
Tensor unsqueeze(const Tensor& x, int64_t dim);
Tensor clone(const Tensor& x);
Tensor contiguous(const Tensor& x);
Tensor cat(const std::vector<Tensor>& xs, int64_t dim = 0);
// dst := src (broadcast, converted), in place; returns dst.
Tensor copy_(const Tensor& dst, const Tensor& src);
Tensor fill_(const Tensor& dst, const Scalar& v);

// Factories (aten::zeros, ...). randn's numbers depend on (seed, index) only.
Tensor zeros(const std::vector<int64_t>& shape, DType dtype = DType::f32);
Tensor ones(const std::vector<int64_t>& shape, DType dtype = DType::f32);
Tensor full(const std::vector<int64_t>& shape, const Scalar& value, DType dtype = DType::f32);
Tensor empty(const std::vector<int64_t>& shape, DType dtype = DType::f32);
Tensor arange(const Scalar& end, DType dtype = DType::i64);
Tensor randn(const std::vector<int64_t>& shape, int64_t seed = 0, DType dtype = DType::f32);

}  // namespace symmflow
