// IValue: a boxed argument or result of an operator — None, Tensor, int, float,
// bool, str, a dtype, or a list of IValues (Tensor[], int[], str[], Tensor?[] ...).
// Boxed kernels take and return IValues; the text IR parses arguments into them.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "symmflow/core/dtype.h"
#include "symmflow/core/tensor.h"

namespace symmflow {

class IValue;
using IValueList = std::vector<IValue>;

class IValue {
 public:
  enum class Kind { None, Tensor, Int, Double, Bool, String, DType, List };

  IValue() = default;  // None
  IValue(std::nullopt_t) {}
  IValue(Tensor t) : v_(std::move(t)) {}
  IValue(int64_t i) : v_(i) {}
  IValue(int i) : v_(int64_t(i)) {}
  IValue(double d) : v_(d) {}
  IValue(bool b) : v_(b) {}
  IValue(std::string s) : v_(std::move(s)) {}
  IValue(const char* s) : v_(std::string(s)) {}
  IValue(DType t) : v_(t) {}
  IValue(IValueList l) : v_(std::move(l)) {}
  IValue(const std::vector<Tensor>& ts);
  IValue(const std::vector<int64_t>& is);
  IValue(const std::vector<std::string>& ss);
  IValue(std::optional<Tensor> t) { if (t) v_ = std::move(*t); }

  Kind kind() const { return Kind(v_.index()); }
  bool is_none() const { return kind() == Kind::None; }
  bool is_tensor() const { return kind() == Kind::Tensor; }
  bool is_int() const { return kind() == Kind::Int; }
  bool is_double() const { return kind() == Kind::Double; }
  bool is_bool() const { return kind() == Kind::Bool; }
  bool is_string() const { return kind() == Kind::String; }
  bool is_dtype() const { return kind() == Kind::DType; }
  bool is_list() const { return kind() == Kind::List; }
  bool is_scalar() const { return is_int() || is_double() || is_bool(); }

  // Accessors check the kind and say what they found.
  const Tensor& to_tensor() const;
  std::optional<Tensor> to_optional_tensor() const;
  int64_t to_int() const;
  double to_double() const;  // int and bool convert
  bool to_bool() const;
  const std::string& to_string() const;
  DType to_dtype() const;
  const IValueList& to_list() const;
  IValueList& to_list();
  std::vector<Tensor> to_tensor_list() const;
  std::vector<std::optional<Tensor>> to_optional_tensor_list() const;
  std::vector<int64_t> to_int_list() const;
  std::vector<double> to_double_list() const;
  std::vector<std::string> to_string_list() const;

  std::string kind_name() const;  // "Tensor", "int", "list", ...
  // A short rendering for error messages: `3`, `"sum"`, `f32[4]`, `[1, 2]`.
  std::string repr() const;

 private:
  std::variant<std::monostate, Tensor, int64_t, double, bool, std::string, DType, IValueList> v_;
};

}  // namespace symmflow
