#include "symmflow/core/ivalue.h"

#include <fmt/format.h>

#include "symmflow/core/printable.h"

namespace symmflow {

IValue::IValue(const std::vector<Tensor>& ts) {
  IValueList l(ts.begin(), ts.end());
  v_ = std::move(l);
}
IValue::IValue(const std::vector<int64_t>& is) {
  IValueList l;
  for (int64_t i : is) l.emplace_back(i);
  v_ = std::move(l);
}
IValue::IValue(const std::vector<std::string>& ss) {
  IValueList l(ss.begin(), ss.end());
  v_ = std::move(l);
}

std::string IValue::kind_name() const {
  switch (kind()) {
    case Kind::None: return "None";
    case Kind::Tensor: return "Tensor";
    case Kind::Int: return "int";
    case Kind::Double: return "float";
    case Kind::Bool: return "bool";
    case Kind::String: return "str";
    case Kind::DType: return "ScalarType";
    case Kind::List: return "list";
  }
  return "?";
}

#define SF_EXPECT_KIND(k, what) \
  SF_CHECK(kind() == Kind::k, "expected {}, got {} {}", what, kind_name(), repr())

const Tensor& IValue::to_tensor() const {
  SF_EXPECT_KIND(Tensor, "a Tensor");
  return std::get<Tensor>(v_);
}
std::optional<Tensor> IValue::to_optional_tensor() const {
  if (is_none()) return std::nullopt;
  return to_tensor();
}
int64_t IValue::to_int() const {
  if (is_bool()) return std::get<bool>(v_);
  SF_EXPECT_KIND(Int, "an int");
  return std::get<int64_t>(v_);
}
double IValue::to_double() const {
  if (is_int()) return double(std::get<int64_t>(v_));
  if (is_bool()) return std::get<bool>(v_) ? 1.0 : 0.0;
  SF_EXPECT_KIND(Double, "a float");
  return std::get<double>(v_);
}
bool IValue::to_bool() const {
  SF_EXPECT_KIND(Bool, "a bool");
  return std::get<bool>(v_);
}
const std::string& IValue::to_string() const {
  SF_EXPECT_KIND(String, "a str");
  return std::get<std::string>(v_);
}
DType IValue::to_dtype() const {
  SF_EXPECT_KIND(DType, "a ScalarType");
  return std::get<DType>(v_);
}
const IValueList& IValue::to_list() const {
  SF_EXPECT_KIND(List, "a list");
  return std::get<IValueList>(v_);
}
IValueList& IValue::to_list() {
  SF_EXPECT_KIND(List, "a list");
  return std::get<IValueList>(v_);
}
std::vector<Tensor> IValue::to_tensor_list() const {
  std::vector<Tensor> out;
  for (const auto& v : to_list()) out.push_back(v.to_tensor());
  return out;
}
std::vector<std::optional<Tensor>> IValue::to_optional_tensor_list() const {
  std::vector<std::optional<Tensor>> out;
  for (const auto& v : to_list()) out.push_back(v.to_optional_tensor());
  return out;
}
std::vector<int64_t> IValue::to_int_list() const {
  if (is_int()) return {to_int()};  // `int[2] stride=1` broadcasts a single int
  std::vector<int64_t> out;
  for (const auto& v : to_list()) out.push_back(v.to_int());
  return out;
}
std::vector<double> IValue::to_double_list() const {
  std::vector<double> out;
  for (const auto& v : to_list()) out.push_back(v.to_double());
  return out;
}
std::vector<std::string> IValue::to_string_list() const {
  std::vector<std::string> out;
  for (const auto& v : to_list()) out.push_back(v.to_string());
  return out;
}

std::string IValue::repr() const {
  switch (kind()) {
    case Kind::None: return "None";
    case Kind::Tensor: return std::get<Tensor>(v_).type_string();
    case Kind::Int: return std::to_string(std::get<int64_t>(v_));
    case Kind::Double: return fmt::format("{}", std::get<double>(v_));
    case Kind::Bool: return std::get<bool>(v_) ? "true" : "false";
    // A message's copy of user text: a NUL would cut what() short.
    case Kind::String: return fmt::format("\"{}\"", printable(std::get<std::string>(v_)));
    case Kind::DType: return std::string(dtype_name(std::get<DType>(v_)));
    case Kind::List: {
      std::string s = "[";
      const auto& l = std::get<IValueList>(v_);
      for (size_t i = 0; i < l.size(); ++i) s += (i ? ", " : "") + l[i].repr();
      return s + "]";
    }
  }
  return "?";
}

}  // namespace symmflow
