// SchemaType: the types of PyTorch's schema language (`Tensor`, `int`, `SymInt`,
// `float`, `Scalar`, `int[2]`, `Tensor?[]`, `Generator?`, ...). Types carry no
// alias annotations: those belong to the Argument or Return that uses the type,
// so `Tensor(a!)` and `Tensor` have the same SchemaType.
//
//   auto t = parse_type("Tensor?[]");   // List(Optional(Tensor))
//   t.to_string() == "Tensor?[]";
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace symmflow {

class SchemaType {
 public:
  enum class Kind {
    Tensor, Int, SymInt, Float, Bool, Str, Scalar, ScalarType, Layout, Device,
    Generator, MemoryFormat, Dimname, Storage, Stream, Any,
    // A Tensor that must live in symmetric memory (RFC seeds/004, option 1):
    // binds like Tensor; Library::def registers such arguments as symmetric.
    SymmMemTensor,
    List,      // elem(), fixed_size() (`int[2]`; nullopt for `int[]`)
    Optional,  // elem()
  };

  // A base (non-container) type; List and Optional have their own factories.
  explicit SchemaType(Kind base);
  static SchemaType tensor() { return SchemaType(Kind::Tensor); }
  static SchemaType list(SchemaType elem, std::optional<int64_t> fixed_size = std::nullopt);
  static SchemaType optional(SchemaType elem);

  Kind kind() const { return kind_; }
  bool is_list() const { return kind_ == Kind::List; }
  bool is_optional() const { return kind_ == Kind::Optional; }
  // The contained type of a List or Optional (an Error for other kinds).
  const SchemaType& elem() const;
  std::optional<int64_t> fixed_size() const { return fixed_size_; }

  // Canonical spelling, which parse_type reads back to an equal type.
  std::string to_string() const;
  bool operator==(const SchemaType& o) const;
  bool operator!=(const SchemaType& o) const { return !(*this == o); }

 private:
  Kind kind_;
  std::shared_ptr<const SchemaType> elem_;  // shared: types are immutable values
  std::optional<int64_t> fixed_size_;
};

// The spelling of a base kind ("Tensor", "int", "float", ...); "" for List/Optional.
std::string_view base_type_name(SchemaType::Kind k);
// The base kind spelled `name` in a schema, or nullopt.
std::optional<SchemaType::Kind> base_type_from_name(std::string_view name);

// Tensor, Tensor?, Tensor[] and Tensor?[] (or SymmMemTensor in their place): the
// types that can hold tensors, and so the only ones that may need symmetric memory
// or carry a tensor alias.
bool is_tensor_like(const SchemaType& t);

}  // namespace symmflow
