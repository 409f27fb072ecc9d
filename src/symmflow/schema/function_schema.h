// FunctionSchema: one operator overload's signature in PyTorch's schema language,
//
//   symm_mem::multimem_all_reduce_(Tensor(a!) input, str reduce_op, str group_name)
//       -> Tensor(a!)
//
// with alias annotations saying which arguments an op writes and which inputs
// its returns alias. The compiler reads mutation and aliasing from here, so the
// printer is exact: parse_schema(s.to_string()) == s for every schema s.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "symmflow/core/ivalue.h"
#include "symmflow/schema/types.h"

namespace symmflow {

// An alias annotation: `(a)`, `(a!)`, `(a|b)`, `(a -> *)`, `(*)`, `(a! -> b)`.
// `before` are the alias sets the value is in when the op starts, `after` those it
// is in when the op ends (equal to `before` when no `->` is written). "*" is the
// wildcard set (aliases anything).
struct AliasInfo {
  std::vector<std::string> before;
  std::vector<std::string> after;
  bool is_write = false;

  std::string to_string() const;  // "(a!)", "(a -> *)"
  bool operator==(const AliasInfo&) const = default;
};

// A default value as written: `value` is what binding fills in, `text` is the
// source spelling (`1e-05`, `contiguous_format`, `[0, 1]`, `'sum'`) so printing
// reproduces the schema exactly. Enum-like identifiers (`contiguous_format`,
// `Mean`) are kept as a str IValue holding the identifier; a ScalarType default
// (`long`) becomes a DType when it names one.
struct DefaultValue {
  IValue value;
  std::string text;
  bool operator==(const DefaultValue& o) const { return text == o.text; }
};

struct Argument {
  std::string name;
  SchemaType type = SchemaType::tensor();
  std::optional<DefaultValue> default_value;
  bool kwarg_only = false;
  // `Tensor(a!) x` or `Tensor[](a!) xs`: the alias of the whole value.
  std::optional<AliasInfo> alias;
  // `Tensor(a!)[] xs`: the alias of each element of a list.
  std::optional<AliasInfo> elem_alias;

  bool is_write() const {
    return (alias && alias->is_write) || (elem_alias && elem_alias->is_write);
  }
  std::string to_string() const;  // "Tensor(a!) x", "int[1]? dim=None"
  bool operator==(const Argument&) const = default;
};

struct Return {
  std::string name;  // empty when unnamed
  SchemaType type = SchemaType::tensor();
  std::optional<AliasInfo> alias;
  std::optional<AliasInfo> elem_alias;

  std::string to_string() const;
  bool operator==(const Return&) const = default;
};

// The type as written with its aliases: base, element alias, list suffix, alias,
// `?` ("Tensor(a!)", "Tensor[](a!)", "Tensor(a)[]", "Tensor(a)?").
std::string type_with_alias_to_string(const SchemaType& t, const std::optional<AliasInfo>& alias,
                                      const std::optional<AliasInfo>& elem_alias);

struct FunctionSchema {
  std::string ns;        // "aten"
  std::string name;      // "add"
  std::string overload;  // "Tensor"; empty for the default overload
  std::vector<Argument> arguments;
  std::vector<Return> returns;
  bool is_vararg = false;  // `(str fmt, ...)`
  bool is_varret = false;  // `-> ...`

  std::string qualified_name() const;  // "aten::add"
  std::string full_name() const;       // "aten::add.Tensor", "aten::relu"
  std::string to_string() const;       // canonical; parses back to an equal schema
  bool operator==(const FunctionSchema&) const = default;

  const Argument* find_argument(std::string_view arg_name) const;
  std::optional<size_t> argument_index(std::string_view arg_name) const;
  // Argument names, for error messages: "self, other, alpha".
  std::string argument_names() const;

  // True when any argument is written (`(a!)` on it or on its elements).
  bool is_mutable() const;
  // Indices of the written arguments, in order.
  std::vector<size_t> mutated_arguments() const;
  // The index of the argument whose alias set the i-th return shares (`Tensor(a!)
  // self ... -> Tensor(a!)` gives 0 for return 0), or nullopt. Wildcards don't count.
  std::optional<size_t> aliased_input_of_return(size_t i) const;
};

}  // namespace symmflow
