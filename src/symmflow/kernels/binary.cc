// Binary pointwise ops (add, sub, mul, div, pow, maximum, minimum, bitwise and/or/
// xor), clamp (and
// clamp_min/clamp_max) and where.
// Each op is one `xxx_impl(dest, a, b, ...)`; the functional, in-place and out=
// entry points only choose the destination.
#include "symmflow/kernels/pointwise.h"
#include "symmflow/kernels/pointwise_impl.h"

namespace symmflow::kernels {

using namespace pointwise_detail;

namespace {

// PyTorch's alpha_check, against the common dtype of the inputs.
void check_alpha(std::string_view op, Operand a, Operand b, const Scalar& alpha) {
  DType common = result_type({a, b});
  SF_CHECK(!alpha.is_bool() || common == DType::boolean,
           "{}: boolean alpha only supported for boolean results", op);
  SF_CHECK(is_floating(common) || !alpha.is_floating(),
           "{}: for integral input tensors, argument alpha must not be a floating point number", op);
}

bool is_bool_operand(Operand o) {
  return o.is_tensor() ? o.tensor->dtype() == DType::boolean : o.scalar->is_bool();
}

Tensor add_impl(std::string_view op, Dest dest, Operand a, Operand b, const Scalar& alpha) {
  check_alpha(op, a, b, alpha);
  return binary<kAllTypes>({op}, dest, a, b, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const C al = scalar_value<T>(alpha);
    return [al](C x, C y) { return functors::Add{}(x, y, al); };
  });
}

Tensor sub_impl(std::string_view op, Dest dest, Operand a, Operand b, const Scalar& alpha) {
  SF_CHECK(!(is_bool_operand(a) && is_bool_operand(b)),
           "{}: subtraction, the `-` operator, with two bool tensors is not supported; use "
           "logical_xor() instead", op);
  SF_CHECK(!is_bool_operand(a) && !is_bool_operand(b),
           "{}: subtraction, the `-` operator, with a bool tensor is not supported; to invert "
           "a mask use logical_not() instead", op);
  check_alpha(op, a, b, alpha);
  return binary<kIntsAndFloats>({op}, dest, a, b, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const C al = scalar_value<T>(alpha);
    return [al](C x, C y) { return functors::Sub{}(x, y, al); };
  });
}

// A functor that ignores the dtype tag.
template <typename F>
auto plain() {
  return [](auto) { return F{}; };
}

Tensor mul_impl(std::string_view op, Dest dest, Operand a, Operand b) {
  return binary<kAllTypes>({op, false, true}, dest, a, b, plain<functors::Mul>());
}

Tensor div_impl(std::string_view op, Dest dest, Operand a, Operand b, RoundingMode mode) {
  if (!mode) return binary<kFloats>({op, true, true}, dest, a, b, plain<functors::Div>());
  BinaryInfo info{op, false, false, true};
  if (*mode == "trunc") return binary<kIntsAndFloats>(info, dest, a, b, plain<functors::DivTrunc>());
  if (*mode == "floor") return binary<kIntsAndFloats>(info, dest, a, b, plain<functors::DivFloor>());
  fail("{}: expected rounding_mode to be one of None, 'trunc' or 'floor', got '{}'", op, *mode);
}

Tensor pow_impl(std::string_view op, Dest dest, Operand self, Operand exponent) {
  return binary<kIntsAndFloats>({op}, dest, self, exponent, plain<functors::Pow>());
}

// Tensor ** Scalar: PowScalar's per-dtype paths (pointwise_functors.h). As PyTorch,
// the exponent is converted to a bf16/f16/integer dtype with an overflow check
// (pow(f16, 1e6) is an error); f32/f64 take it as a double.
Tensor pow_scalar_impl(std::string_view op, Dest dest, const Tensor& self, const Scalar& e) {
  SF_CHECK(!(!is_floating(self.dtype()) && !e.is_floating() && e.to_int() < 0),
           "{}: Integers to negative integer powers are not allowed.", op);
  const DType common = result_type({self, e});
  dispatch<kIntsAndFloats>(op, common, [](auto) {});
  if (common != DType::f32 && common != DType::f64) check_scalar_fits(op, e, common);
  return finish(op, dest, self.sizes(), common, self.is_meta(), {self}, [&](const Tensor& dst) {
    dispatch<kIntsAndFloats>(op, common, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using P = functors::PowScalar;
      P f{e.to_double()};
      if constexpr (std::is_same_v<T, Half>) {
        f = P{double(float(e.to<T>())), P::kStd};
      } else if constexpr (std::is_same_v<T, BFloat16>) {
        // bf16 rounds the exponent first; PyTorch picks sqrt/rsqrt/reciprocal on the
        // exponent as given, x*x & co. on the rounded one, powf otherwise.
        const double r = double(float(e.to<T>()));
        const bool special = r == 0.5 || r == -0.5 || r == -1.0;
        f = P{r, special && r != e.to_double() ? P::kStd : P::kBFloat16};
      }
      if constexpr (std::is_floating_point_v<T>) {
        // PowScalar's x*x path in a loop of its own: its per-element branches on
        // the exponent keep the general loop scalar, and pow(x, 2) (RMSNorm's
        // square, as make_fx traces it) ran at 12x mul's time.
        if (f.e == 2.0) return elementwise<T, T>(dst, {prepare_input(self, common, dst)}, [](T x) { return x * x; });
      }
      elementwise<T, T>(dst, {prepare_input(self, common, dst)}, f);
    });
  });
}

Tensor maximum_impl(std::string_view op, Dest dest, const Tensor& a, const Tensor& b) {
  return binary<kAllTypes>({op}, dest, a, b, plain<functors::Maximum>());
}
Tensor minimum_impl(std::string_view op, Dest dest, const Tensor& a, const Tensor& b) {
  return binary<kAllTypes>({op}, dest, a, b, plain<functors::Minimum>());
}

Tensor clamp_impl(std::string_view op, Dest dest, const Tensor& self,
                  const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  SF_CHECK(min || max, "{}: at least one of 'min' or 'max' must not be None", op);
  ResultType rt;
  rt.add(self);
  if (min) rt.add(*min);
  if (max) rt.add(*max);
  const DType common = rt.get();
  dispatch<kIntsAndFloats>(op, common, [](auto) {});
  // PyTorch (clamp_out): with both bounds given, a NaN bound makes every element
  // NaN. A single NaN bound compares false everywhere and leaves x as it is; but
  // clamp_min/clamp_max (their own kernels) make every element NaN.
  const bool one_bound_op = op.starts_with("clamp_m");
  const bool nan_bound = ((min && max) || one_bound_op) &&
                         ((min && std::isnan(min->to_double())) || (max && std::isnan(max->to_double())));
  if (!nan_bound) {
    if (min) check_scalar_fits(op, *min, common);
    if (max) check_scalar_fits(op, *max, common);
  }
  return finish(op, dest, self.sizes(), common, self.is_meta(), {self}, [&](const Tensor& dst) {
    dispatch<kIntsAndFloats>(op, common, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = compute_t<T>;
      using L = std::numeric_limits<C>;
      if (nan_bound) {  // only floating here: a NaN bound makes the result floating
        return elementwise<T, T>(dst, {prepare_input(self, common, dst)},
                                 [](C) { return L::quiet_NaN(); });
      }
      const C lo = min ? scalar_value<T>(*min) : L::has_infinity ? -L::infinity() : L::lowest();
      const C hi = max ? scalar_value<T>(*max) : L::has_infinity ? L::infinity() : L::max();
      const auto f = [lo, hi](C x) { return functors::Clamp{}(x, lo, hi); };
      elementwise<T, T>(dst, {prepare_input(self, common, dst)}, f);
    });
  });
}

Tensor where_impl(std::string_view op, Dest dest, const Tensor& cond, Operand a, Operand b) {
  SF_CHECK(cond.dtype() == DType::boolean, "{}: expected the condition to be bool, got {}", op,
           cond.type_string());
  const DType common = result_type({a, b});
  const Shape shape = broadcast_operands({cond, a, b});
  const bool meta = any_meta_operand({cond, a, b});
  // A Scalar becomes a tensor of the common dtype (PyTorch 1.13: scalar_tensor,
  // with its overflow check): where(c, i32, 2**40) is an error, here and on meta.
  for (Operand o : {a, b})
    if (!o.is_tensor()) check_scalar_fits(op, *o.scalar, common);
  return finish(op, dest, shape, common, meta, {cond, a, b}, [&](const Tensor& dst) {
    auto input = [&](Operand o) {
      return o.is_tensor() ? prepare_input(*o.tensor, common, dst) : scalar_tensor(*o.scalar, common);
    };
    Tensor c = prepare_input(cond, DType::boolean, dst), ta = input(a), tb = input(b);
    dispatch<kAllTypes>(op, common, [&](auto tag) {
      using T = typename decltype(tag)::type;
      elementwise<T, bool, T, T>(dst, {c, ta, tb}, functors::Where{});
    });
  });
}

}  // namespace

// ---- entry points -----------------------------------------------------------------

#define SF_DEFINE_ALPHA_OP(name)                                                           \
  Tensor name(const Tensor& a, const Tensor& b, const Scalar& alpha) {                     \
    return name##_impl(#name, Dest::fresh(), a, b, alpha);                                 \
  }                                                                                        \
  Tensor name(const Tensor& a, const Scalar& b, const Scalar& alpha) {                     \
    return name##_impl(#name, Dest::fresh(), a, b, alpha);                                 \
  }                                                                                        \
  const Tensor& name##_(const Tensor& self, const Tensor& other, const Scalar& alpha) {     \
    name##_impl(#name "_", Dest::in_place(self), self, other, alpha);                      \
    return self;                                                                           \
  }                                                                                        \
  const Tensor& name##_(const Tensor& self, const Scalar& other, const Scalar& alpha) {     \
    name##_impl(#name "_", Dest::in_place(self), self, other, alpha);                      \
    return self;                                                                           \
  }                                                                                        \
  const Tensor& name##_out(const Tensor& out, const Tensor& a, const Tensor& b,            \
                           const Scalar& alpha) {                                          \
    name##_impl(#name "_out", Dest::into(out), a, b, alpha);                               \
    return out;                                                                            \
  }                                                                                        \
  const Tensor& name##_out(const Tensor& out, const Tensor& a, const Scalar& b,            \
                           const Scalar& alpha) {                                          \
    name##_impl(#name "_out", Dest::into(out), a, b, alpha);                               \
    return out;                                                                            \
  }
SF_DEFINE_ALPHA_OP(add)
SF_DEFINE_ALPHA_OP(sub)
#undef SF_DEFINE_ALPHA_OP

Tensor rsub(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  return sub_impl("rsub", Dest::fresh(), other, self, alpha);
}
Tensor rsub(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  return sub_impl("rsub", Dest::fresh(), other, self, alpha);
}

Tensor mul(const Tensor& a, const Tensor& b) { return mul_impl("mul", Dest::fresh(), a, b); }
Tensor mul(const Tensor& a, const Scalar& b) { return mul_impl("mul", Dest::fresh(), a, b); }
const Tensor& mul_(const Tensor& self, const Tensor& other) {
  mul_impl("mul_", Dest::in_place(self), self, other);
  return self;
}
const Tensor& mul_(const Tensor& self, const Scalar& other) {
  mul_impl("mul_", Dest::in_place(self), self, other);
  return self;
}
const Tensor& mul_out(const Tensor& out, const Tensor& a, const Tensor& b) {
  mul_impl("mul_out", Dest::into(out), a, b);
  return out;
}
const Tensor& mul_out(const Tensor& out, const Tensor& a, const Scalar& b) {
  mul_impl("mul_out", Dest::into(out), a, b);
  return out;
}

Tensor div(const Tensor& a, const Tensor& b, RoundingMode m) {
  return div_impl("div", Dest::fresh(), a, b, m);
}
Tensor div(const Tensor& a, const Scalar& b, RoundingMode m) {
  return div_impl("div", Dest::fresh(), a, b, m);
}
const Tensor& div_(const Tensor& self, const Tensor& other, RoundingMode m) {
  div_impl("div_", Dest::in_place(self), self, other, m);
  return self;
}
const Tensor& div_(const Tensor& self, const Scalar& other, RoundingMode m) {
  div_impl("div_", Dest::in_place(self), self, other, m);
  return self;
}
const Tensor& div_out(const Tensor& out, const Tensor& a, const Tensor& b, RoundingMode m) {
  div_impl("div_out", Dest::into(out), a, b, m);
  return out;
}
const Tensor& div_out(const Tensor& out, const Tensor& a, const Scalar& b, RoundingMode m) {
  div_impl("div_out", Dest::into(out), a, b, m);
  return out;
}

Tensor pow(const Tensor& self, const Tensor& e) { return pow_impl("pow", Dest::fresh(), self, e); }
Tensor pow(const Tensor& self, const Scalar& e) {
  return pow_scalar_impl("pow", Dest::fresh(), self, e);
}
Tensor pow(const Scalar& self, const Tensor& e) { return pow_impl("pow", Dest::fresh(), self, e); }
const Tensor& pow_(const Tensor& self, const Tensor& e) {
  pow_impl("pow_", Dest::in_place(self), self, e);
  return self;
}
const Tensor& pow_(const Tensor& self, const Scalar& e) {
  pow_scalar_impl("pow_", Dest::in_place(self), self, e);
  return self;
}
const Tensor& pow_out(const Tensor& out, const Tensor& self, const Tensor& e) {
  pow_impl("pow_out", Dest::into(out), self, e);
  return out;
}
const Tensor& pow_out(const Tensor& out, const Tensor& self, const Scalar& e) {
  pow_scalar_impl("pow_out", Dest::into(out), self, e);
  return out;
}
const Tensor& pow_out(const Tensor& out, const Scalar& self, const Tensor& e) {
  pow_impl("pow_out", Dest::into(out), self, e);
  return out;
}

Tensor maximum(const Tensor& a, const Tensor& b) {
  return maximum_impl("maximum", Dest::fresh(), a, b);
}
Tensor minimum(const Tensor& a, const Tensor& b) {
  return minimum_impl("minimum", Dest::fresh(), a, b);
}
const Tensor& maximum_out(const Tensor& out, const Tensor& a, const Tensor& b) {
  maximum_impl("maximum_out", Dest::into(out), a, b);
  return out;
}
const Tensor& minimum_out(const Tensor& out, const Tensor& a, const Tensor& b) {
  minimum_impl("minimum_out", Dest::into(out), a, b);
  return out;
}

Tensor clamp(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  return clamp_impl("clamp", Dest::fresh(), self, min, max);
}
const Tensor& clamp_(const Tensor& self, const std::optional<Scalar>& min,
                     const std::optional<Scalar>& max) {
  clamp_impl("clamp_", Dest::in_place(self), self, min, max);
  return self;
}
const Tensor& clamp_out(const Tensor& out, const Tensor& self, const std::optional<Scalar>& min,
                        const std::optional<Scalar>& max) {
  clamp_impl("clamp_out", Dest::into(out), self, min, max);
  return out;
}

#define SF_DEFINE_BITWISE(name, F)                                                          \
  Tensor name(const Tensor& a, const Tensor& b) {                                           \
    return binary<kInts | kBool>({#name}, Dest::fresh(), a, b, plain<functors::F>());       \
  }                                                                                         \
  Tensor name(const Tensor& a, const Scalar& b) {                                           \
    return binary<kInts | kBool>({#name}, Dest::fresh(), a, b, plain<functors::F>());       \
  }                                                                                         \
  const Tensor& name##_(const Tensor& self, const Tensor& other) {                          \
    binary<kInts | kBool>({#name "_"}, Dest::in_place(self), self, other, plain<functors::F>()); \
    return self;                                                                            \
  }
SF_POINTWISE_BITWISE_OPS(SF_DEFINE_BITWISE)
#undef SF_DEFINE_BITWISE

Tensor clamp_tensor(const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  SF_CHECK(min || max, "clamp: At least one of 'min' or 'max' must not be None");
  ResultType rt;
  rt.add(self);
  if (min) rt.add(*min);
  if (max) rt.add(*max);
  const DType common = rt.get();
  const Tensor x = self.dtype() == common ? self : to_dtype(self, common);
  const Tensor lo = min ? maximum(x, *min) : x;
  return max ? minimum(lo, *max) : lo;
}

Tensor clamp_min(const Tensor& self, const Scalar& min) {
  return clamp_impl("clamp_min", Dest::fresh(), self, min, std::nullopt);
}
Tensor clamp_max(const Tensor& self, const Scalar& max) {
  return clamp_impl("clamp_max", Dest::fresh(), self, std::nullopt, max);
}
const Tensor& clamp_min_(const Tensor& self, const Scalar& min) {
  clamp_impl("clamp_min_", Dest::in_place(self), self, min, std::nullopt);
  return self;
}
const Tensor& clamp_max_(const Tensor& self, const Scalar& max) {
  clamp_impl("clamp_max_", Dest::in_place(self), self, std::nullopt, max);
  return self;
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  return where_impl("where", Dest::fresh(), cond, a, b);
}
Tensor where(const Tensor& cond, const Tensor& a, const Scalar& b) {
  return where_impl("where", Dest::fresh(), cond, a, b);
}
Tensor where(const Tensor& cond, const Scalar& a, const Tensor& b) {
  return where_impl("where", Dest::fresh(), cond, a, b);
}
Tensor where(const Tensor& cond, const Scalar& a, const Scalar& b) {
  return where_impl("where", Dest::fresh(), cond, a, b);
}
const Tensor& where_out(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  where_impl("where_out", Dest::into(out), cond, a, b);
  return out;
}

}  // namespace symmflow::kernels
