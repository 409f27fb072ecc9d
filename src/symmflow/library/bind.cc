#include "symmflow/library/bind.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "symmflow/core/error.h"

namespace symmflow {

namespace {
using K = SchemaType::Kind;

// "str \"x\"", "int 3", "None": the kind, then the value unless they say the same.
std::string describe_value(const IValue& v) {
  return v.is_none() ? std::string("None") : v.kind_name() + " " + v.repr();
}

bool is_int_like(K k) { return k == K::Int || k == K::SymInt; }

bool base_matches(K kind, const IValue& v, bool* exact) {
  *exact = true;
  switch (kind) {
    case K::Tensor:
    case K::SymmMemTensor: return v.is_tensor();
    case K::Int:
    case K::SymInt: return v.is_int();
    case K::Float:
      *exact = v.is_double();
      return v.is_double() || v.is_int();
    case K::Bool: return v.is_bool();
    case K::Str: return v.is_string();
    case K::Scalar:
      *exact = false;  // an int prefers `int`, a float prefers `float`
      return v.is_scalar();
    case K::ScalarType: return v.is_dtype();
    // Enum-like and opaque types have no IValue kind of their own: they travel as
    // their name (`contiguous_format`, `cpu`) or as an integer code.
    case K::Layout:
    case K::Device:
    case K::MemoryFormat:
    case K::Dimname:
    case K::Generator:
    case K::Storage:
    case K::Stream: return v.is_string() || v.is_int();
    case K::Any:
      *exact = false;
      return true;
    case K::List:
    case K::Optional: break;
  }
  return false;
}
}  // namespace

bool value_matches(const SchemaType& type, const IValue& v, bool* exact, IValue* converted) {
  if (converted) *converted = v;
  if (type.is_optional()) {
    if (v.is_none()) {
      *exact = true;
      return true;
    }
    return value_matches(type.elem(), v, exact, converted);
  }
  if (type.is_list()) {
    const SchemaType& elem = type.elem();
    if (!v.is_list()) {
      // `int[2] stride=1`: PyTorch repeats a single int to the list's size.
      if (type.fixed_size() && is_int_like(elem.kind()) && v.is_int()) {
        *exact = false;
        if (converted) *converted = IValue(IValueList(size_t(*type.fixed_size()), v));
        return true;
      }
      return false;
    }
    *exact = true;
    IValueList out;
    for (const IValue& e : v.to_list()) {
      bool e_exact = false;
      IValue e_conv;
      if (!value_matches(elem, e, &e_exact, converted ? &e_conv : nullptr)) return false;
      *exact = *exact && e_exact;
      if (converted) out.push_back(std::move(e_conv));
    }
    if (converted) *converted = IValue(std::move(out));
    return true;
  }
  return base_matches(type.kind(), v, exact);
}

std::string describe_call(std::span<const IValue> positional, const Kwargs& kwargs) {
  std::vector<std::string> parts;
  for (const IValue& v : positional) parts.push_back(v.kind_name());
  for (const auto& [k, v] : kwargs) parts.push_back(k + "=" + v.kind_name());
  return fmt::format("({})", fmt::join(parts, ", "));
}

BindAttempt try_bind(const FunctionSchema& s, std::span<const IValue> positional,
                     const Kwargs& kwargs, bool describe) {
  BindAttempt r;
  // The message is built only when asked for: `msg` is called then.
  auto reject = [&](auto msg) {
    if (describe) r.error = fmt::format("{}: {}", s.full_name(), msg());
    return r;
  };
  size_t n_positional = 0;
  while (n_positional < s.arguments.size() && !s.arguments[n_positional].kwarg_only)
    ++n_positional;
  if (positional.size() > n_positional && !s.is_vararg) {
    if (n_positional < s.arguments.size())
      return reject([&] { return fmt::format(
          "argument '{}' is keyword-only and cannot be passed positionally (got {} positional "
          "arguments, the schema takes {})",
          s.arguments[n_positional].name, positional.size(), n_positional); });
    return reject([&] { return fmt::format("too many positional arguments: expected at most {} ({}), got {}",
                              n_positional, s.argument_names(), positional.size()); });
  }
  for (const auto& kw : kwargs) {
    const std::string& name = kw.first;  // not a structured binding: clang cannot capture one in a lambda
    auto i = s.argument_index(name);
    if (!i)
      return reject([&] { return fmt::format("unknown keyword argument '{}'; arguments are: {}", name,
                                s.argument_names()); });
    if (*i < positional.size())
      return reject([&] { return fmt::format("argument '{}' given both positionally and as a keyword", name); });
  }
  // Two passes: the first only checks (a rejected overload copies nothing; resolve
  // tries every overload of a name on each call), the second converts and binds.
  auto given_at = [&](size_t i) -> const IValue* {
    if (i < positional.size()) return &positional[i];
    auto it = kwargs.find(s.arguments[i].name);
    return it != kwargs.end() ? &it->second : nullptr;
  };
  for (size_t i = 0; i < s.arguments.size(); ++i) {
    const Argument& a = s.arguments[i];
    const IValue* given = given_at(i);
    bool exact = false;
    if (given != nullptr) {
      if (!value_matches(a.type, *given, &exact))
        return reject([&] { return fmt::format("argument '{}' expected {} but found {}", a.name,
                                  a.type.to_string(), describe_value(*given)); });
      r.exact += exact ? 1 : 0;
    } else if (!a.default_value) {
      return reject([&] { return fmt::format("missing required argument '{}' ({} {}); schema: {}", a.name,
                                a.type.to_string(), a.name, s.to_string()); });
    }
  }
  std::vector<IValue> bound;
  bound.reserve(std::max(positional.size(), s.arguments.size()));
  for (size_t i = 0; i < s.arguments.size(); ++i) {
    const Argument& a = s.arguments[i];
    const IValue* given = given_at(i);
    bool exact = false;
    IValue value;
    if (given != nullptr) {
      value_matches(a.type, *given, &exact, &value);
    } else if (!value_matches(a.type, a.default_value->value, &exact, &value)) {
      // Defaults go through the same conversion (`SymInt[2] stride=1` -> [1, 1]).
      value = a.default_value->value;  // enum-like text defaults stay as written
    }
    bound.push_back(std::move(value));
  }
  for (size_t i = s.arguments.size(); i < positional.size(); ++i) bound.push_back(positional[i]);
  r.args = std::move(bound);
  return r;
}

std::vector<IValue> bind_arguments(const FunctionSchema& schema, std::span<const IValue> positional,
                                   const Kwargs& kwargs) {
  BindAttempt r = try_bind(schema, positional, kwargs);
  if (!r.args) throw Error(r.error);
  return std::move(*r.args);
}

}  // namespace symmflow
