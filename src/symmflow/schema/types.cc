#include "symmflow/schema/types.h"

#include <array>
#include <utility>

#include "symmflow/core/error.h"

namespace symmflow {

namespace {
using K = SchemaType::Kind;
// Schema spellings of the base kinds, in enum order.
constexpr std::array<std::pair<K, std::string_view>, 17> kBaseNames = {{
    {K::Tensor, "Tensor"},
    {K::Int, "int"},
    {K::SymInt, "SymInt"},
    {K::Float, "float"},
    {K::Bool, "bool"},
    {K::Str, "str"},
    {K::Scalar, "Scalar"},
    {K::ScalarType, "ScalarType"},
    {K::Layout, "Layout"},
    {K::Device, "Device"},
    {K::Generator, "Generator"},
    {K::MemoryFormat, "MemoryFormat"},
    {K::Dimname, "Dimname"},
    {K::Storage, "Storage"},
    {K::Stream, "Stream"},
    {K::Any, "Any"},
    {K::SymmMemTensor, "SymmMemTensor"},
}};
}  // namespace

std::string_view base_type_name(SchemaType::Kind k) {
  for (const auto& [kind, name] : kBaseNames)
    if (kind == k) return name;
  return "";
}

std::optional<SchemaType::Kind> base_type_from_name(std::string_view name) {
  for (const auto& [kind, n] : kBaseNames)
    if (n == name) return kind;
  return std::nullopt;
}

SchemaType::SchemaType(Kind base) : kind_(base) {
  SF_CHECK(base != Kind::List && base != Kind::Optional,
           "SchemaType(kind): expected a base kind, got a container; use "
           "SchemaType::list or SchemaType::optional");
}

SchemaType SchemaType::list(SchemaType elem, std::optional<int64_t> fixed_size) {
  SF_CHECK(!fixed_size || *fixed_size >= 0, "list size must be >= 0, got {}", *fixed_size);
  SchemaType t(Kind::Any);
  t.kind_ = Kind::List;
  t.elem_ = std::make_shared<const SchemaType>(std::move(elem));
  t.fixed_size_ = fixed_size;
  return t;
}

SchemaType SchemaType::optional(SchemaType elem) {
  SchemaType t(Kind::Any);
  t.kind_ = Kind::Optional;
  t.elem_ = std::make_shared<const SchemaType>(std::move(elem));
  return t;
}

const SchemaType& SchemaType::elem() const {
  SF_CHECK(elem_ != nullptr, "elem() of schema type {}: expected a list or optional type",
           to_string());
  return *elem_;
}

std::string SchemaType::to_string() const {
  switch (kind_) {
    case Kind::List:
      return elem_->to_string() +
             (fixed_size_ ? "[" + std::to_string(*fixed_size_) + "]" : std::string("[]"));
    case Kind::Optional:
      return elem_->to_string() + "?";
    default:
      return std::string(base_type_name(kind_));
  }
}

bool SchemaType::operator==(const SchemaType& o) const {
  if (kind_ != o.kind_ || fixed_size_ != o.fixed_size_) return false;
  if (elem_ == nullptr || o.elem_ == nullptr) return elem_ == o.elem_;
  return *elem_ == *o.elem_;
}

bool is_tensor_like(const SchemaType& t) {
  const SchemaType* e = &t;
  if (e->is_list()) e = &e->elem();
  if (e->is_optional()) e = &e->elem();
  return e->kind() == SchemaType::Kind::Tensor || e->kind() == SchemaType::Kind::SymmMemTensor;
}

}  // namespace symmflow
