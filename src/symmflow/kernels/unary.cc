// Unary pointwise ops: the SF_POINTWISE_UNARY_OPS table of pointwise.h, gelu, and
// the activations with parameters (leaky_relu, elu, softplus, hardtanh).
#include <algorithm>

#include "symmflow/kernels/factories.h"
#include "symmflow/kernels/pointwise.h"
#include "symmflow/kernels/pointwise_impl.h"

namespace symmflow::kernels {

using namespace pointwise_detail;

namespace {

// Each op: functional, in place and out=, running functor F on the compute type.
// Functors with a SLEEF function (F::kVec) map it over whole runs.
template <unsigned Set, typename F>
Tensor run_unary(std::string_view name, bool int_to_float, Dest dest, const Tensor& x,
                 bool same_dtype_out = false) {
  if constexpr (requires { F::kVec; }) {
    static_assert(Set == kFloats, "SLEEF functors are for floating dtypes");
    return unary_vec<F>(name, int_to_float, dest, x, same_dtype_out);
  } else {
    return unary<Set>(name, int_to_float, dest, x, [](auto) { return F{}; }, same_dtype_out);
  }
}

void check_not_bool(std::string_view op, const Tensor& x) {
  if (op == "neg")
    SF_CHECK(x.dtype() != DType::boolean,
             "neg: negation, the `-` operator, on a bool tensor is not supported. If you are "
             "trying to invert a mask, use logical_not() instead");
}

// out= of the table's ops, as PyTorch defines them:
// - neg, abs, silu, bitwise_not, floor, ceil, round, trunc, sign: no type promotion, so out must have x's dtype ("Found dtype ...").
// - relu: PyTorch generates relu.out from relu (`autogen`): the result is computed,
//   then copied into out. So any out dtype takes it (converted as copy_ does) and out
//   may share memory with x; out itself must still not repeat an element.
// - the others: the result type must cast to out's dtype (exp(i32, out=f16) is fine).
template <unsigned Set, typename F>
void run_unary_out(std::string_view name, bool int_to_float, const Tensor& out, const Tensor& x) {
  const std::string op = std::string(name) + "_out";
  if (name == "relu") {
    Tensor r = run_unary<Set, F>(op, int_to_float, Dest::fresh(), x);
    resize_out(op, out, r.sizes());
    assert_no_internal_overlap(op, out);
    if (!out.is_meta() && !r.is_meta()) copy_(out, r);
    return;
  }
  constexpr std::string_view kExactOut[] = {"neg", "abs", "silu", "bitwise_not", "floor", "ceil", "round", "trunc",
                                             "sign"};
  const bool exact = std::find(std::begin(kExactOut), std::end(kExactOut), name) != std::end(kExactOut);
  run_unary<Set, F>(op, int_to_float, Dest::into(out), x, exact);
}

}  // namespace

#define SF_DEFINE_UNARY(name, F, to_float, dtypes)                                          \
  Tensor name(const Tensor& x) {                                                            \
    check_not_bool(#name, x);                                                               \
    return run_unary<dtypes, functors::F>(#name, to_float, Dest::fresh(), x);               \
  }                                                                                         \
  const Tensor& name##_(const Tensor& self) {                                               \
    check_not_bool(#name, self);                                                            \
    run_unary<dtypes, functors::F>(#name "_", to_float, Dest::in_place(self), self);        \
    return self;                                                                            \
  }                                                                                         \
  const Tensor& name##_out(const Tensor& out, const Tensor& x) {                            \
    check_not_bool(#name, x);                                                               \
    run_unary_out<dtypes, functors::F>(#name, to_float, out, x);                            \
    return out;                                                                             \
  }
SF_POINTWISE_UNARY_OPS(SF_DEFINE_UNARY)
#undef SF_DEFINE_UNARY

namespace {

// out= must have x's dtype (PyTorch builds gelu without type promotion).
Tensor run_gelu(std::string_view name, Dest dest, const Tensor& x, std::string_view approximate) {
  if (approximate == "none") return run_unary<kFloats, functors::Gelu>(name, false, dest, x, true);
  if (approximate == "tanh") return run_unary<kFloats, functors::GeluTanh>(name, false, dest, x, true);
  fail("{}: approximate must be \"none\" or \"tanh\", got \"{}\"", name, approximate);
}

}  // namespace

Tensor gelu(const Tensor& x, std::string_view approximate) {
  return run_gelu("gelu", Dest::fresh(), x, approximate);
}
const Tensor& gelu_(const Tensor& self, std::string_view approximate) {
  run_gelu("gelu_", Dest::in_place(self), self, approximate);
  return self;
}
const Tensor& gelu_out(const Tensor& out, const Tensor& x, std::string_view approximate) {
  run_gelu("gelu_out", Dest::into(out), x, approximate);
  return out;
}

namespace {

// A float activation whose element function make(Tag<T>) builds from its Scalars.
template <typename Make>
Tensor activation(std::string_view name, Dest dest, const Tensor& x, Make&& make) {
  return unary<kFloats>(name, false, dest, x, std::forward<Make>(make));
}

auto leaky(const Scalar& slope) {
  return [&slope](auto tag) {
    using C = compute_t<typename decltype(tag)::type>;
    const C s = C(slope.to_double());
    return [s](C v) { return v > C(0) ? v : v * s; };
  };
}

auto elu_fn(const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  return [&](auto tag) {
    using C = compute_t<typename decltype(tag)::type>;
    const C neg = C(alpha.to_double()) * C(scale.to_double()), pos = C(scale.to_double());
    const C in = C(input_scale.to_double());
    return [neg, pos, in](C v) { return v <= C(0) ? (std::exp(v * in) - C(1)) * neg : v * pos; };
  };
}

// PyTorch 1.13 converts the bounds to x's dtype (checked, an integer x truncates a
// float bound) and clamps in it.
Tensor hardtanh_impl(std::string_view name, const Tensor& out, const Tensor& x, const Scalar& lo, const Scalar& hi) {
  SF_CHECK(x.dtype() != DType::boolean, "{}: Bool inputs not supported for hardtanh", name);
  auto bound = [&](const Scalar& b) {
    check_scalar_fits(name, b, x.dtype());
    return !is_floating(x.dtype()) && b.is_floating() ? Scalar(int64_t(std::trunc(b.to_double()))) : b;
  };
  clamp_out(out, x, bound(lo), bound(hi));
  return out;
}

}  // namespace

Tensor leaky_relu(const Tensor& x, const Scalar& slope) {
  return activation("leaky_relu", Dest::fresh(), x, leaky(slope));
}
const Tensor& leaky_relu_(const Tensor& self, const Scalar& slope) {
  activation("leaky_relu_", Dest::in_place(self), self, leaky(slope));
  return self;
}
Tensor elu(const Tensor& x, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  return activation("elu", Dest::fresh(), x, elu_fn(alpha, scale, input_scale));
}
const Tensor& elu_(const Tensor& self, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  activation("elu_", Dest::in_place(self), self, elu_fn(alpha, scale, input_scale));
  return self;
}
Tensor softplus(const Tensor& x, const Scalar& beta, const Scalar& threshold) {
  return activation("softplus", Dest::fresh(), x, [&](auto tag) {
    using C = compute_t<typename decltype(tag)::type>;
    const C b = C(beta.to_double()), t = C(threshold.to_double());
    return [b, t](C v) { return v * b > t ? v : C(std::log1p(std::exp(v * b))) / b; };
  });
}
Tensor hardtanh(const Tensor& x, const Scalar& min_val, const Scalar& max_val) {
  // PyTorch's hardtanh allocates with empty_like, not TensorIterator: a dense x's
  // strides exactly (a size-1 dim's too).
  return hardtanh_impl("hardtanh", empty_like_layout(x), x, min_val, max_val);
}
const Tensor& hardtanh_(const Tensor& self, const Scalar& min_val, const Scalar& max_val) {
  hardtanh_impl("hardtanh_", self, self, min_val, max_val);
  return self;
}

Tensor isnan(const Tensor& x) { return ne(x, x); }
Tensor isinf(const Tensor& x) {
  if (is_floating(x.dtype())) return eq(abs(x), Scalar(INFINITY));
  return ne(x, x);  // false everywhere (PyTorch's zeros_like: x's layout, as ne's)
}

}  // namespace symmflow::kernels
