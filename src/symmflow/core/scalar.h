// Scalar: a number argument (PyTorch's `Scalar`): an int, a float or a bool. Its
// kind matters for type promotion: `int_tensor * 2` stays integral, `* 2.0` is f32.
#pragma once
#include <cstdint>
#include <variant>

#include "symmflow/core/dtype.h"
#include "symmflow/core/ivalue.h"

namespace symmflow {

class Scalar {
 public:
  Scalar() : v_(int64_t(0)) {}
  Scalar(int64_t v) : v_(v) {}  // NOLINT: numbers convert implicitly, as in PyTorch
  Scalar(int v) : v_(int64_t(v)) {}  // NOLINT
  Scalar(double v) : v_(v) {}   // NOLINT
  Scalar(bool v) : v_(v) {}     // NOLINT
  static Scalar from(const IValue& v) {
    if (v.is_int()) return Scalar(v.to_int());
    if (v.is_bool()) return Scalar(v.to_bool());
    return Scalar(v.to_double());  // errors with the kind it found
  }
  IValue to_ivalue() const {
    if (is_bool()) return IValue(std::get<bool>(v_));
    if (is_integral()) return IValue(std::get<int64_t>(v_));
    return IValue(std::get<double>(v_));
  }

  bool is_integral() const { return std::holds_alternative<int64_t>(v_); }
  bool is_floating() const { return std::holds_alternative<double>(v_); }
  bool is_bool() const { return std::holds_alternative<bool>(v_); }
  double to_double() const {
    if (auto* i = std::get_if<int64_t>(&v_)) return double(*i);
    if (auto* b = std::get_if<bool>(&v_)) return *b ? 1.0 : 0.0;
    return std::get<double>(v_);
  }
  int64_t to_int() const {
    if (auto* d = std::get_if<double>(&v_)) return int64_t(*d);
    if (auto* b = std::get_if<bool>(&v_)) return *b;
    return std::get<int64_t>(v_);
  }
  // The value as element type T (bf16/f16 round from float, as PyTorch does).
  template <typename T>
  T to() const {
    if constexpr (std::is_same_v<T, bool>) return to_double() != 0.0;
    else if constexpr (std::is_integral_v<T>) return T(to_int());
    else if constexpr (std::is_same_v<T, double>) return to_double();
    else return T(float(to_double()));
  }

 private:
  std::variant<int64_t, double, bool> v_;
};

}  // namespace symmflow
