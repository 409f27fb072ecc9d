// aten:: pointwise ops with PyTorch's schemas: functional, in-place (`_`, which
// return their mutated self) and out= forms.
#include "symmflow/kernels/copy.h"
#include "symmflow/kernels/pointwise.h"
#include "symmflow/ops/boxing.h"

namespace symmflow::ops {
namespace k = symmflow::kernels;

namespace {

std::optional<std::string_view> rounding_mode(Args a, size_t i) {
  if (a[i].is_none()) return std::nullopt;
  return std::string_view(a[i].to_string());
}

void register_arith(Library& m) {
  // add / sub: alpha scales `other`.
#define SF_ALPHA_OP(name)                                                                        \
  m.def(#name ".Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");                \
  m.def(#name ".Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor");                   \
  m.def(#name "_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)");       \
  m.def(#name "_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)");          \
  m.def(#name ".out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)"); \
  impl_both(m, #name ".Tensor", [](OpContext&, Args a) -> Results {                             \
    return {k::name(tensor_arg(a, 0), tensor_arg(a, 1), scalar_arg(a, 2))};                      \
  });                                                                                            \
  impl_both(m, #name ".Scalar", [](OpContext&, Args a) -> Results {                             \
    return {k::name(tensor_arg(a, 0), scalar_arg(a, 1), scalar_arg(a, 2))};                      \
  });                                                                                            \
  impl_both(m, #name "_.Tensor", [](OpContext&, Args a) -> Results {                            \
    return {k::name##_(tensor_arg(a, 0), tensor_arg(a, 1), scalar_arg(a, 2))};                   \
  });                                                                                            \
  impl_both(m, #name "_.Scalar", [](OpContext&, Args a) -> Results {                            \
    return {k::name##_(tensor_arg(a, 0), scalar_arg(a, 1), scalar_arg(a, 2))};                   \
  });                                                                                            \
  impl_both(m, #name ".out", [](OpContext&, Args a) -> Results {                                \
    return {k::name##_out(tensor_arg(a, 3), tensor_arg(a, 0), tensor_arg(a, 1), scalar_arg(a, 2))}; \
  });
  SF_ALPHA_OP(add)
  SF_ALPHA_OP(sub)
#undef SF_ALPHA_OP

  m.def("rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  m.def("rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor");
  impl_both(m, "rsub.Tensor", [](OpContext&, Args a) -> Results {
    return {k::rsub(tensor_arg(a, 0), tensor_arg(a, 1), scalar_arg(a, 2))};
  });
  impl_both(m, "rsub.Scalar", [](OpContext&, Args a) -> Results {
    return {k::rsub(tensor_arg(a, 0), scalar_arg(a, 1), scalar_arg(a, 2))};
  });

  m.def("mul.Tensor(Tensor self, Tensor other) -> Tensor");
  m.def("mul.Scalar(Tensor self, Scalar other) -> Tensor");
  m.def("mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)");
  m.def("mul_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)");
  m.def("mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)");
  impl_both(m, "mul.Tensor", [](OpContext&, Args a) -> Results { return {k::mul(tensor_arg(a, 0), tensor_arg(a, 1))}; });
  impl_both(m, "mul.Scalar", [](OpContext&, Args a) -> Results { return {k::mul(tensor_arg(a, 0), scalar_arg(a, 1))}; });
  impl_both(m, "mul_.Tensor", [](OpContext&, Args a) -> Results { return {k::mul_(tensor_arg(a, 0), tensor_arg(a, 1))}; });
  impl_both(m, "mul_.Scalar", [](OpContext&, Args a) -> Results { return {k::mul_(tensor_arg(a, 0), scalar_arg(a, 1))}; });
  impl_both(m, "mul.out", [](OpContext&, Args a) -> Results { return {k::mul_out(tensor_arg(a, 2), tensor_arg(a, 0), tensor_arg(a, 1))}; });

  m.def("div.Tensor(Tensor self, Tensor other) -> Tensor");
  m.def("div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor");
  m.def("div.Scalar(Tensor self, Scalar other) -> Tensor");
  m.def("div.Scalar_mode(Tensor self, Scalar other, *, str? rounding_mode) -> Tensor");
  m.def("div_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)");
  m.def("div_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)");
  m.def("div.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)");
  impl_both(m, "div.Tensor", [](OpContext&, Args a) -> Results { return {k::div(tensor_arg(a, 0), tensor_arg(a, 1))}; });
  impl_both(m, "div.Tensor_mode", [](OpContext&, Args a) -> Results { return {k::div(tensor_arg(a, 0), tensor_arg(a, 1), rounding_mode(a, 2))}; });
  impl_both(m, "div.Scalar", [](OpContext&, Args a) -> Results { return {k::div(tensor_arg(a, 0), scalar_arg(a, 1))}; });
  impl_both(m, "div.Scalar_mode", [](OpContext&, Args a) -> Results { return {k::div(tensor_arg(a, 0), scalar_arg(a, 1), rounding_mode(a, 2))}; });
  impl_both(m, "div_.Tensor", [](OpContext&, Args a) -> Results { return {k::div_(tensor_arg(a, 0), tensor_arg(a, 1))}; });
  impl_both(m, "div_.Scalar", [](OpContext&, Args a) -> Results { return {k::div_(tensor_arg(a, 0), scalar_arg(a, 1))}; });
  impl_both(m, "div.out", [](OpContext&, Args a) -> Results { return {k::div_out(tensor_arg(a, 2), tensor_arg(a, 0), tensor_arg(a, 1))}; });

  m.def("pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor");
  m.def("pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor");
  m.def("pow.Scalar(Scalar self, Tensor exponent) -> Tensor");
  m.def("pow_.Tensor(Tensor(a!) self, Tensor exponent) -> Tensor(a!)");
  m.def("pow_.Scalar(Tensor(a!) self, Scalar exponent) -> Tensor(a!)");
  impl_both(m, "pow.Tensor_Tensor", [](OpContext&, Args a) -> Results { return {k::pow(tensor_arg(a, 0), tensor_arg(a, 1))}; });
  impl_both(m, "pow.Tensor_Scalar", [](OpContext&, Args a) -> Results { return {k::pow(tensor_arg(a, 0), scalar_arg(a, 1))}; });
  impl_both(m, "pow.Scalar", [](OpContext&, Args a) -> Results { return {k::pow(scalar_arg(a, 0), tensor_arg(a, 1))}; });
  impl_both(m, "pow_.Tensor", [](OpContext&, Args a) -> Results { return {k::pow_(tensor_arg(a, 0), tensor_arg(a, 1))}; });
  impl_both(m, "pow_.Scalar", [](OpContext&, Args a) -> Results { return {k::pow_(tensor_arg(a, 0), scalar_arg(a, 1))}; });

  m.def("maximum(Tensor self, Tensor other) -> Tensor");
  m.def("minimum(Tensor self, Tensor other) -> Tensor");
  m.def("maximum.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("minimum.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)");
  impl_both(m, "maximum", [](OpContext&, Args a) -> Results { return {k::maximum(tensor_arg(a, 0), tensor_arg(a, 1))}; });
  impl_both(m, "minimum", [](OpContext&, Args a) -> Results { return {k::minimum(tensor_arg(a, 0), tensor_arg(a, 1))}; });
  impl_both(m, "maximum.out", [](OpContext&, Args a) -> Results { return {k::maximum_out(tensor_arg(a, 2), tensor_arg(a, 0), tensor_arg(a, 1))}; });
  impl_both(m, "minimum.out", [](OpContext&, Args a) -> Results { return {k::minimum_out(tensor_arg(a, 2), tensor_arg(a, 0), tensor_arg(a, 1))}; });

  m.def("clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor");
  m.def("clamp_(Tensor(a!) self, Scalar? min=None, Scalar? max=None) -> Tensor(a!)");
  impl_both(m, "clamp", [](OpContext&, Args a) -> Results { return {k::clamp(tensor_arg(a, 0), opt_scalar_arg(a, 1), opt_scalar_arg(a, 2))}; });
  impl_both(m, "clamp_", [](OpContext&, Args a) -> Results { return {k::clamp_(tensor_arg(a, 0), opt_scalar_arg(a, 1), opt_scalar_arg(a, 2))}; });

  m.def("clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor");
  impl_both(m, "clamp.Tensor", [](OpContext&, Args a) -> Results {
    return {k::clamp_tensor(tensor_arg(a, 0), a[1].to_optional_tensor(), a[2].to_optional_tensor())};
  });
  m.def("clamp_min(Tensor self, Scalar min) -> Tensor");
  m.def("clamp_max(Tensor self, Scalar max) -> Tensor");
  m.def("clamp_min_(Tensor(a!) self, Scalar min) -> Tensor(a!)");
  m.def("clamp_max_(Tensor(a!) self, Scalar max) -> Tensor(a!)");
  impl_both(m, "clamp_min", [](OpContext&, Args a) -> Results { return {k::clamp_min(tensor_arg(a, 0), scalar_arg(a, 1))}; });
  impl_both(m, "clamp_max", [](OpContext&, Args a) -> Results { return {k::clamp_max(tensor_arg(a, 0), scalar_arg(a, 1))}; });
  impl_both(m, "clamp_min_", [](OpContext&, Args a) -> Results { return {k::clamp_min_(tensor_arg(a, 0), scalar_arg(a, 1))}; });
  impl_both(m, "clamp_max_", [](OpContext&, Args a) -> Results { return {k::clamp_max_(tensor_arg(a, 0), scalar_arg(a, 1))}; });

  m.def("where.self(Tensor condition, Tensor self, Tensor other) -> Tensor");
  m.def("where.ScalarSelf(Tensor condition, Scalar self, Tensor other) -> Tensor");
  m.def("where.ScalarOther(Tensor condition, Tensor self, Scalar other) -> Tensor");
  m.def("where.Scalar(Tensor condition, Scalar self, Scalar other) -> Tensor");
  impl_both(m, "where.self", [](OpContext&, Args a) -> Results { return {k::where(tensor_arg(a, 0), tensor_arg(a, 1), tensor_arg(a, 2))}; });
  impl_both(m, "where.ScalarSelf", [](OpContext&, Args a) -> Results { return {k::where(tensor_arg(a, 0), scalar_arg(a, 1), tensor_arg(a, 2))}; });
  impl_both(m, "where.ScalarOther", [](OpContext&, Args a) -> Results { return {k::where(tensor_arg(a, 0), tensor_arg(a, 1), scalar_arg(a, 2))}; });
  impl_both(m, "where.Scalar", [](OpContext&, Args a) -> Results { return {k::where(tensor_arg(a, 0), scalar_arg(a, 1), scalar_arg(a, 2))}; });
}

void register_compare_and_unary(Library& m) {
#define SF_COMPARE_OP(name, F)                                                                 \
  m.def(#name ".Tensor(Tensor self, Tensor other) -> Tensor");                                 \
  m.def(#name ".Scalar(Tensor self, Scalar other) -> Tensor");                                 \
  impl_both(m, #name ".Tensor", [](OpContext&, Args a) -> Results {                           \
    return {k::name(tensor_arg(a, 0), tensor_arg(a, 1))};                                      \
  });                                                                                          \
  impl_both(m, #name ".Scalar", [](OpContext&, Args a) -> Results {                           \
    return {k::name(tensor_arg(a, 0), scalar_arg(a, 1))};                                      \
  });
  SF_POINTWISE_COMPARE_OPS(SF_COMPARE_OP)
#undef SF_COMPARE_OP

#define SF_BITWISE_OP(name, F)                                                                 \
  m.def(#name ".Tensor(Tensor self, Tensor other) -> Tensor");                                 \
  m.def(#name ".Scalar(Tensor self, Scalar other) -> Tensor");                                 \
  m.def(#name "_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)");                        \
  impl_both(m, #name ".Tensor", [](OpContext&, Args a) -> Results {                           \
    return {k::name(tensor_arg(a, 0), tensor_arg(a, 1))};                                      \
  });                                                                                          \
  impl_both(m, #name ".Scalar", [](OpContext&, Args a) -> Results {                           \
    return {k::name(tensor_arg(a, 0), scalar_arg(a, 1))};                                      \
  });                                                                                          \
  impl_both(m, #name "_.Tensor", [](OpContext&, Args a) -> Results {                          \
    return {k::name##_(tensor_arg(a, 0), tensor_arg(a, 1))};                                   \
  });
  SF_POINTWISE_BITWISE_OPS(SF_BITWISE_OP)
#undef SF_BITWISE_OP

#define SF_UNARY_OP(name, F, to_float, dtypes)                                                 \
  m.def(#name "(Tensor self) -> Tensor");                                                      \
  m.def(#name "_(Tensor(a!) self) -> Tensor(a!)");                                             \
  m.def(#name ".out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)");                           \
  impl_both(m, #name, [](OpContext&, Args a) -> Results { return {k::name(tensor_arg(a, 0))}; }); \
  impl_both(m, #name "_", [](OpContext&, Args a) -> Results { return {k::name##_(tensor_arg(a, 0))}; }); \
  impl_both(m, #name ".out", [](OpContext&, Args a) -> Results {                              \
    return {k::name##_out(tensor_arg(a, 1), tensor_arg(a, 0))};                                \
  });
  SF_POINTWISE_UNARY_OPS(SF_UNARY_OP)
#undef SF_UNARY_OP

  m.def("leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor");
  m.def("leaky_relu_(Tensor(a!) self, Scalar negative_slope=0.01) -> Tensor(a!)");
  m.def("elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor");
  m.def("elu_(Tensor(a!) self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor(a!)");
  m.def("softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor");
  m.def("hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor");
  m.def("hardtanh_(Tensor(a!) self, Scalar min_val=-1, Scalar max_val=1) -> Tensor(a!)");
  impl_both(m, "leaky_relu", [](OpContext&, Args a) -> Results { return {k::leaky_relu(tensor_arg(a, 0), scalar_arg(a, 1))}; });
  impl_both(m, "leaky_relu_", [](OpContext&, Args a) -> Results { return {k::leaky_relu_(tensor_arg(a, 0), scalar_arg(a, 1))}; });
  impl_both(m, "elu", [](OpContext&, Args a) -> Results {
    return {k::elu(tensor_arg(a, 0), scalar_arg(a, 1), scalar_arg(a, 2), scalar_arg(a, 3))};
  });
  impl_both(m, "elu_", [](OpContext&, Args a) -> Results {
    return {k::elu_(tensor_arg(a, 0), scalar_arg(a, 1), scalar_arg(a, 2), scalar_arg(a, 3))};
  });
  impl_both(m, "softplus", [](OpContext&, Args a) -> Results {
    return {k::softplus(tensor_arg(a, 0), scalar_arg(a, 1), scalar_arg(a, 2))};
  });
  impl_both(m, "hardtanh", [](OpContext&, Args a) -> Results {
    return {k::hardtanh(tensor_arg(a, 0), scalar_arg(a, 1), scalar_arg(a, 2))};
  });
  impl_both(m, "hardtanh_", [](OpContext&, Args a) -> Results {
    return {k::hardtanh_(tensor_arg(a, 0), scalar_arg(a, 1), scalar_arg(a, 2))};
  });

  m.def("isnan(Tensor self) -> Tensor");
  m.def("isinf(Tensor self) -> Tensor");
  impl_both(m, "isnan", [](OpContext&, Args a) -> Results { return {k::isnan(tensor_arg(a, 0))}; });
  impl_both(m, "isinf", [](OpContext&, Args a) -> Results { return {k::isinf(tensor_arg(a, 0))}; });

  m.def("gelu(Tensor self, *, str approximate='none') -> Tensor");
  m.def("gelu_(Tensor(a!) self, *, str approximate='none') -> Tensor(a!)");
  m.def("gelu.out(Tensor self, *, str approximate='none', Tensor(a!) out) -> Tensor(a!)");
  impl_both(m, "gelu", [](OpContext&, Args a) -> Results { return {k::gelu(tensor_arg(a, 0), a[1].to_string())}; });
  impl_both(m, "gelu_", [](OpContext&, Args a) -> Results { return {k::gelu_(tensor_arg(a, 0), a[1].to_string())}; });
  impl_both(m, "gelu.out", [](OpContext&, Args a) -> Results { return {k::gelu_out(tensor_arg(a, 2), tensor_arg(a, 0), a[1].to_string())}; });
}

void register_copy(Library& m) {
  m.def("copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)");
  m.def("fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)");
  m.def("zero_(Tensor(a!) self) -> Tensor(a!)");
  m.def("clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor");
  m.def("contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a)");
  // PyTorch's memory checks (an expanded or partially overlapping self is an error).
  impl_both(m, "copy_", [](OpContext&, Args a) -> Results { return {k::checked_copy_(tensor_arg(a, 0), tensor_arg(a, 1))}; });
  impl_both(m, "fill_.Scalar", [](OpContext&, Args a) -> Results { return {k::fill_(tensor_arg(a, 0), scalar_arg(a, 1))}; });
  impl_both(m, "zero_", [](OpContext&, Args a) -> Results { return {k::zero_(tensor_arg(a, 0))}; });
  impl_both(m, "clone", [](OpContext&, Args a) -> Results { return {k::clone(tensor_arg(a, 0))}; });
  impl_both(m, "contiguous", [](OpContext&, Args a) -> Results { return {k::contiguous(tensor_arg(a, 0))}; });
  // make_fx's spellings of a copy: torch.tensor(...) constants, and .float() /
  // .to(dtype). symmflow has one device and one layout, so _to_copy converts the
  // dtype only; its result is contiguous (PyTorch keeps a dense input's strides:
  // the values are the same).
  m.def("lift_fresh_copy(Tensor self) -> Tensor");
  m.def("_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
        "bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor");
  impl_both(m, "lift_fresh_copy", [](OpContext&, Args a) -> Results { return {k::clone(tensor_arg(a, 0))}; });
  impl_both(m, "_to_copy", [](OpContext&, Args a) -> Results {
    const Tensor& x = tensor_arg(a, 0);
    return {k::to_dtype(x, opt_dtype_arg(a, 1).value_or(x.dtype()))};
  });
}

}  // namespace

SYMMFLOW_LIBRARY_FRAGMENT(aten, m) {
  register_arith(m);
  register_compare_and_unary(m);
  register_copy(m);
}

}  // namespace symmflow::ops
