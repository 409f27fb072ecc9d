// Type promotion of pointwise ops: PyTorch's `result_type`.
//
// Operands fall in three priority classes: tensors with dim > 0, 0-dim tensors,
// and Scalars (PyTorch's "wrapped numbers"). A lower class changes the result only
// when it is of a higher *category* (bool < integral < floating):
//
//   result_type(i32[4], Scalar(2.5))   == f32   (a float Scalar is the default dtype)
//   result_type(bf16[4], f32[] 0-dim)  == bf16  (same category: the dim > 0 tensor wins)
//   result_type(bool[4], Scalar(3))    == i64
//   result_type(i32[4], i64[4])        == i64   (same class: promote_types)
#pragma once
#include <initializer_list>
#include <optional>
#include <string_view>

#include "symmflow/core/scalar.h"
#include "symmflow/core/tensor.h"

namespace symmflow::kernels {

// PyTorch's default dtype: what a float Scalar becomes, and what integer inputs of
// true division and of float-only unary ops (exp, sin, ...) are promoted to.
inline constexpr DType kDefaultFloat = DType::f32;

// One input of a pointwise op: a Tensor or a Scalar (both by reference).
struct Operand {
  const Tensor* tensor = nullptr;
  const Scalar* scalar = nullptr;
  Operand(const Tensor& t) : tensor(&t) {}  // NOLINT: implicit on purpose
  Operand(const Scalar& s) : scalar(&s) {}  // NOLINT
  bool is_tensor() const { return tensor != nullptr; }
};

// Accumulates operands, then answers the promoted dtype (PyTorch's ResultTypeState).
class ResultType {
 public:
  ResultType& add(const Tensor& t);
  ResultType& add(const Scalar& s);
  ResultType& add(const Operand& o) { return o.is_tensor() ? add(*o.tensor) : add(*o.scalar); }
  // The promoted dtype; an Error when nothing was added.
  DType get() const;

 private:
  std::optional<DType> dim_, zero_dim_, wrapped_;
};

DType result_type(std::initializer_list<Operand> operands);
// The dtype a Scalar has on its own: bool, i64 or the default float.
DType scalar_dtype(const Scalar& s);
// PyTorch's canCast: floating -> integral/bool and non-bool -> bool are not allowed.
bool can_cast(DType from, DType to);
// Throws "result type f32 can't be cast to the desired output type i64" (with `op`).
void check_can_cast(std::string_view op, DType from, DType to);
// `t` unchanged when floating, otherwise the default float dtype (true division, exp...).
DType to_floating(DType t);

// PyTorch's checked Scalar conversion (c10::checked_convert, what Scalar::to<T>()
// does in fill_, full, pow's exponent, clamp's bounds): throws "<op>: value cannot
// be converted to type int without overflow" (PyTorch's C++ type name: int,
// int64_t, at::Half, at::BFloat16, float) when s is out of dtype's finite range,
// or NaN/inf for an integer dtype. An infinite s fits every floating dtype; nothing
// overflows f64 or bool.
//   check_scalar_fits("fill_", Scalar(70000.0), DType::f16);   // throws
//   check_scalar_fits("fill_", Scalar(65504.0), DType::f16);   // fine
void check_scalar_fits(std::string_view op, const Scalar& s, DType dtype);

}  // namespace symmflow::kernels
