// Pointwise CPU kernels: elementwise arithmetic, unary math, comparisons, where.
//
//   Tensor y = add(x, bias);               // broadcasting, PyTorch type promotion
//   sub_(x, 1, 0.5);                        // in place: x -= 0.5, returns x
//   gt_out(mask, x, 0);                     // into an existing bool tensor
//   Tensor g = gelu(y, "tanh");
//
// Conventions, shared by every op here:
// - Functional ops return a fresh contiguous tensor (Tensor::empty, so it follows the
//   thread's current allocator). `op_(self, ...)` writes self and returns it (the same
//   handle); the promoted type must be castable to self's dtype and the broadcast
//   shape must be self's shape. `op_out(out, ...)` writes out and returns it: out
//   must have the result shape (an out with 0 elements is resized) and the result
//   type must be castable to out's dtype (neg, abs, gelu, bitwise_not, floor & co.: exactly the result
//   dtype; relu: any dtype; as PyTorch).
// - Types follow PyTorch's result_type (type_promotion.h). Integer inputs of true
//   division and of exp/log/sqrt/rsqrt/sin/cos/tanh/sigmoid become f32.
// - Inputs may be any strided view (transposed, sliced, expanded with stride 0).
//   Memory overlap of in-place and out= writes follows PyTorch (core/overlap.h): the
//   written tensor must not repeat an element (stride 0, e.g. an expand), and an
//   input must not partially overlap it (x[0:6] += x[2:8] is an error; the same
//   view, x += x, is fine). These are errors when the op runs (meta tensors have no
//   memory), except the stride-0 one, which is geometry and raised on meta too.
//   Overlaps PyTorch leaves undecided (neither view dense, e.g. x[:, 0:2] +=
//   x[:, 1:3]) read the old values: such an input is copied first.
// - Meta: when any input is a meta tensor, only the output type is computed and a
//   meta tensor is returned (shape and dtype errors are still raised). So every op
//   here is also its own Meta kernel.
// - Per-element math is in pointwise_functors.h (computed in float for bf16/f16).
#pragma once
#include <optional>
#include <string_view>

#include "symmflow/core/scalar.h"
#include "symmflow/core/tensor.h"

namespace symmflow::kernels {

// ---- add / sub: a + alpha * b, a - alpha * b ----------------------------------
Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor add(const Tensor& a, const Scalar& b, const Scalar& alpha = 1);
const Tensor& add_(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
const Tensor& add_(const Tensor& self, const Scalar& other, const Scalar& alpha = 1);
const Tensor& add_out(const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
const Tensor& add_out(const Tensor& out, const Tensor& a, const Scalar& b, const Scalar& alpha = 1);

// sub with a bool operand is an error (as PyTorch: use logical ops instead).
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor sub(const Tensor& a, const Scalar& b, const Scalar& alpha = 1);
const Tensor& sub_(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
const Tensor& sub_(const Tensor& self, const Scalar& other, const Scalar& alpha = 1);
const Tensor& sub_out(const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
const Tensor& sub_out(const Tensor& out, const Tensor& a, const Scalar& b, const Scalar& alpha = 1);
// rsub(self, other, alpha) = other - alpha * self: what `1 - x` records (PyTorch's
// rsub is sub with the operands swapped, so its promotion and refusals are sub's).
Tensor rsub(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor rsub(const Tensor& self, const Scalar& other, const Scalar& alpha = 1);

// ---- mul ----------------------------------------------------------------------
Tensor mul(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Scalar& b);
const Tensor& mul_(const Tensor& self, const Tensor& other);
const Tensor& mul_(const Tensor& self, const Scalar& other);
const Tensor& mul_out(const Tensor& out, const Tensor& a, const Tensor& b);
const Tensor& mul_out(const Tensor& out, const Tensor& a, const Scalar& b);

// ---- div ----------------------------------------------------------------------
// rounding_mode: nullopt = true division (integers promote to f32), "trunc" or
// "floor" (integers stay integers; an integer division by zero is an Error).
using RoundingMode = std::optional<std::string_view>;
Tensor div(const Tensor& a, const Tensor& b, RoundingMode rounding_mode = std::nullopt);
Tensor div(const Tensor& a, const Scalar& b, RoundingMode rounding_mode = std::nullopt);
const Tensor& div_(const Tensor& self, const Tensor& other, RoundingMode rounding_mode = std::nullopt);
const Tensor& div_(const Tensor& self, const Scalar& other, RoundingMode rounding_mode = std::nullopt);
const Tensor& div_out(const Tensor& out, const Tensor& a, const Tensor& b,
                      RoundingMode rounding_mode = std::nullopt);
const Tensor& div_out(const Tensor& out, const Tensor& a, const Scalar& b,
                      RoundingMode rounding_mode = std::nullopt);

// ---- pow ----------------------------------------------------------------------
// An integral tensor to a negative integral Scalar power is an Error ("Integers to
// negative integer powers are not allowed."); with a tensor exponent, integer
// powers follow PyTorch (1 ** -n == 1, (-1) ** -n == +-1, otherwise 0). A Scalar
// exponent takes PyTorch's per-dtype paths (functors::PowScalar: f16 has no sqrt
// shortcut, so f16 pow(-inf, 0.5) is inf) and must fit a bf16/f16/integer dtype.
Tensor pow(const Tensor& self, const Tensor& exponent);
Tensor pow(const Tensor& self, const Scalar& exponent);
Tensor pow(const Scalar& self, const Tensor& exponent);
const Tensor& pow_(const Tensor& self, const Tensor& exponent);
const Tensor& pow_(const Tensor& self, const Scalar& exponent);
const Tensor& pow_out(const Tensor& out, const Tensor& self, const Tensor& exponent);
const Tensor& pow_out(const Tensor& out, const Tensor& self, const Scalar& exponent);
const Tensor& pow_out(const Tensor& out, const Scalar& self, const Tensor& exponent);

// ---- maximum / minimum (NaN propagates) ---------------------------------------
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
const Tensor& maximum_out(const Tensor& out, const Tensor& a, const Tensor& b);
const Tensor& minimum_out(const Tensor& out, const Tensor& a, const Tensor& b);

// ---- clamp: min(max(x, lo), hi); a missing bound is not applied -----------------
// With both bounds given and either NaN, every element is NaN (PyTorch); a single
// NaN bound leaves x unchanged. Bounds must fit the result dtype (clamp(i32, 2**40)
// is an error, as PyTorch's checked conversion).
Tensor clamp(const Tensor& self, const std::optional<Scalar>& min,
             const std::optional<Scalar>& max = std::nullopt);
const Tensor& clamp_(const Tensor& self, const std::optional<Scalar>& min,
                     const std::optional<Scalar>& max = std::nullopt);
const Tensor& clamp_out(const Tensor& out, const Tensor& self, const std::optional<Scalar>& min,
                        const std::optional<Scalar>& max = std::nullopt);

// clamp.Tensor, with tensor bounds (x.clamp(min=t)): min(max(x, lo), hi) broadcast and
// promoted together, a NaN anywhere gives NaN (PyTorch's clamp.Tensor kernel);
// at least one bound. maximum/minimum's loops.
Tensor clamp_tensor(const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max);

// clamp_min(x, lo) / clamp_max(x, hi): clamp with one bound (F.normalize's
// clamp_min(eps)); promotion and checks are clamp's, but a NaN bound makes every
// element NaN (PyTorch's own clamp_min/clamp_max kernels; clamp(x, nan) keeps x).
Tensor clamp_min(const Tensor& self, const Scalar& min);
Tensor clamp_max(const Tensor& self, const Scalar& max);
const Tensor& clamp_min_(const Tensor& self, const Scalar& min);
const Tensor& clamp_max_(const Tensor& self, const Scalar& max);

// ---- where(cond, a, b): cond is bool; a and b are promoted together ------------
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, const Scalar& b);
Tensor where(const Tensor& cond, const Scalar& a, const Tensor& b);
Tensor where(const Tensor& cond, const Scalar& a, const Scalar& b);
const Tensor& where_out(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b);

// ---- bitwise and / or / xor: integers and bool (`mask & other`), promoted --------
#define SF_POINTWISE_BITWISE_OPS(X) X(bitwise_and, BitAnd) X(bitwise_or, BitOr) X(bitwise_xor, BitXor)
#define SF_DECLARE_BITWISE(name, F)                           \
  Tensor name(const Tensor& a, const Tensor& b);              \
  Tensor name(const Tensor& a, const Scalar& b);              \
  const Tensor& name##_(const Tensor& self, const Tensor& other);
SF_POINTWISE_BITWISE_OPS(SF_DECLARE_BITWISE)
#undef SF_DECLARE_BITWISE

// ---- comparisons: the inputs are compared in their promoted type; result bool ---
// X(name, functor)
#define SF_POINTWISE_COMPARE_OPS(X) \
  X(eq, Eq) X(ne, Ne) X(lt, Lt) X(le, Le) X(gt, Gt) X(ge, Ge)

#define SF_DECLARE_COMPARE(name, F)                                                  \
  Tensor name(const Tensor& a, const Tensor& b);                                     \
  Tensor name(const Tensor& a, const Scalar& b);                                     \
  const Tensor& name##_out(const Tensor& out, const Tensor& a, const Tensor& b);     \
  const Tensor& name##_out(const Tensor& out, const Tensor& a, const Scalar& b);
SF_POINTWISE_COMPARE_OPS(SF_DECLARE_COMPARE)
#undef SF_DECLARE_COMPARE

// ---- unary --------------------------------------------------------------------
// X(name, functor, integer inputs become f32, dtypes it runs on)
// neg/abs/relu keep integer dtypes; neg, abs and relu of bool are errors (PyTorch:
// "abs_cpu" not implemented for 'Bool'). silu refuses integers and bool ("silu_cpu"
// not implemented for 'Long'), and its out= must have exactly x's dtype. bitwise_not
// (`~mask`) takes integers and bool only (logical not on bool). floor, ceil, round
// (half to even) and trunc keep integers as they are and refuse bool; sign is 0
// for NaN and for -0.0 (PyTorch 1.13), and takes bool.
#define SF_POINTWISE_UNARY_OPS(X)                                      \
  X(neg, Neg, false, kIntsAndFloats)                                  \
  X(abs, Abs, false, kIntsAndFloats)                                  \
  X(relu, Relu, false, kIntsAndFloats)                                \
  X(exp, Exp, true, kFloats)                                          \
  X(log, Log, true, kFloats)                                          \
  X(sqrt, Sqrt, true, kFloats)                                        \
  X(rsqrt, Rsqrt, true, kFloats)                                      \
  X(sin, Sin, true, kFloats)                                          \
  X(cos, Cos, true, kFloats)                                          \
  X(tanh, Tanh, true, kFloats)                                        \
  X(sigmoid, Sigmoid, true, kFloats)                                  \
  X(silu, Silu, false, kFloats)                                       \
  X(erf, Erf, true, kFloats)                                          \
  X(reciprocal, Reciprocal, true, kFloats)                            \
  X(bitwise_not, BitwiseNot, false, kInts | kBool)                   \
  X(floor, Floor, false, kIntsAndFloats)                              \
  X(ceil, Ceil, false, kIntsAndFloats)                                \
  X(round, Round, false, kIntsAndFloats)                              \
  X(trunc, Trunc, false, kIntsAndFloats)                              \
  X(sign, Sign, false, kAllTypes)                                     \
  X(log1p, Log1p, true, kFloats)                                      \
  X(expm1, Expm1, true, kFloats)                                      \
  X(log2, Log2, true, kFloats)

#define SF_DECLARE_UNARY(name, F, to_float, dtypes)   \
  Tensor name(const Tensor& x);                       \
  const Tensor& name##_(const Tensor& self);          \
  const Tensor& name##_out(const Tensor& out, const Tensor& x);
SF_POINTWISE_UNARY_OPS(SF_DECLARE_UNARY)
#undef SF_DECLARE_UNARY

// gelu: approximate is "none" (erf) or "tanh"; floating dtypes only.
Tensor gelu(const Tensor& x, std::string_view approximate = "none");
const Tensor& gelu_(const Tensor& self, std::string_view approximate = "none");
const Tensor& gelu_out(const Tensor& out, const Tensor& x, std::string_view approximate = "none");

// isnan(x) = x != x (PyTorch's definition); isinf(x) = |x| == inf for floating x,
// all false for integers and bool. Bool results.
Tensor isnan(const Tensor& x);
Tensor isinf(const Tensor& x);

// ---- activations with parameters (F.leaky_relu, F.elu, F.softplus, F.hardtanh) ---
// leaky_relu: x > 0 ? x : x * slope. elu: x > 0 ? x * scale : (exp(x * input_scale)
// - 1) * alpha * scale. softplus: x * beta > threshold ? x : log1p(exp(x * beta)) /
// beta. Floating dtypes only (PyTorch: "leaky_relu_cpu" not implemented for 'Long');
// the parameters are taken in the compute type (float for bf16/f16). hardtanh is
// clamp(x, min_val, max_val) in x's dtype: the bounds are converted to it (an
// integer x truncates 0.5 to 0; NaN or out of range is an error), bool is refused
// (PyTorch 1.13).
Tensor leaky_relu(const Tensor& x, const Scalar& negative_slope = 0.01);
const Tensor& leaky_relu_(const Tensor& self, const Scalar& negative_slope = 0.01);
Tensor elu(const Tensor& x, const Scalar& alpha = 1, const Scalar& scale = 1, const Scalar& input_scale = 1);
const Tensor& elu_(const Tensor& self, const Scalar& alpha = 1, const Scalar& scale = 1,
                   const Scalar& input_scale = 1);
Tensor softplus(const Tensor& x, const Scalar& beta = 1, const Scalar& threshold = 20);
Tensor hardtanh(const Tensor& x, const Scalar& min_val = -1, const Scalar& max_val = 1);
const Tensor& hardtanh_(const Tensor& self, const Scalar& min_val = -1, const Scalar& max_val = 1);

}  // namespace symmflow::kernels
