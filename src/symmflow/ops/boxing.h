// Helpers for writing boxed kernels: bound arguments arrive as IValues in schema
// order; these read them as the kernel's C++ types.
#pragma once
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "symmflow/core/ivalue.h"
#include "symmflow/core/scalar.h"
#include "symmflow/library/library.h"

namespace symmflow::ops {

using Args = std::span<const IValue>;
using Results = std::vector<IValue>;

inline const Tensor& tensor_arg(Args a, size_t i) { return a[i].to_tensor(); }
inline Scalar scalar_arg(Args a, size_t i) { return Scalar::from(a[i]); }
inline std::optional<Scalar> opt_scalar_arg(Args a, size_t i) {
  if (a[i].is_none()) return std::nullopt;
  return Scalar::from(a[i]);
}
inline std::optional<DType> opt_dtype_arg(Args a, size_t i) {
  if (a[i].is_none()) return std::nullopt;
  return a[i].to_dtype();
}
inline std::optional<int64_t> opt_int_arg(Args a, size_t i) {
  if (a[i].is_none()) return std::nullopt;
  return a[i].to_int();
}
inline Shape int_list_arg(Args a, size_t i) {
  if (a[i].is_none()) return {};
  return a[i].to_int_list();
}

// Registers `k` for both CPU and Meta: symmflow kernels compute types only when
// an input is a meta tensor, so one function serves both keys.
inline void impl_both(Library& m, std::string_view name, Kernel k) {
  m.impl(name, k, DispatchKey::CPU);
  m.impl(name, std::move(k), DispatchKey::Meta);
}

}  // namespace symmflow::ops
