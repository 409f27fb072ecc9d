#include "symmflow/schema/function_schema.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace symmflow {

namespace {
std::string join_sets(const std::vector<std::string>& sets) {
  return fmt::format("{}", fmt::join(sets, "|"));
}

bool shares_set(const AliasInfo& a, const AliasInfo& b) {
  for (const auto& s : a.before)
    if (s != "*" && std::find(b.before.begin(), b.before.end(), s) != b.before.end())
      return true;
  return false;
}
}  // namespace

std::string AliasInfo::to_string() const {
  std::string s = "(" + join_sets(before) + (is_write ? "!" : "");
  if (after != before) s += " -> " + join_sets(after);
  return s + ")";
}

std::string type_with_alias_to_string(const SchemaType& t, const std::optional<AliasInfo>& alias,
                                      const std::optional<AliasInfo>& elem_alias) {
  // The alias goes right after the base type unless a list suffix follows, in
  // which case the base carries the element alias and the list carries `alias`
  // — the order the parser reads them in.
  bool outer_optional = t.is_optional();
  const SchemaType& inner = outer_optional ? t.elem() : t;
  std::string s;
  if (inner.is_list()) {
    s = inner.elem().is_optional() ? inner.elem().elem().to_string() : inner.elem().to_string();
    if (elem_alias) s += elem_alias->to_string();
    if (inner.elem().is_optional()) s += "?";
    s += inner.fixed_size() ? fmt::format("[{}]", *inner.fixed_size()) : "[]";
    if (alias) s += alias->to_string();
  } else {
    s = inner.to_string();
    if (alias) s += alias->to_string();
  }
  if (outer_optional) s += "?";
  return s;
}

std::string Argument::to_string() const {
  std::string s = type_with_alias_to_string(type, alias, elem_alias) + " " + name;
  if (default_value) s += "=" + default_value->text;
  return s;
}

std::string Return::to_string() const {
  std::string s = type_with_alias_to_string(type, alias, elem_alias);
  if (!name.empty()) s += " " + name;
  return s;
}

std::string FunctionSchema::qualified_name() const { return ns + "::" + name; }

std::string FunctionSchema::full_name() const {
  return overload.empty() ? qualified_name() : qualified_name() + "." + overload;
}

std::string FunctionSchema::to_string() const {
  std::vector<std::string> args;
  bool in_kwargs = false;
  for (const auto& a : arguments) {
    if (a.kwarg_only && !in_kwargs) {
      args.emplace_back("*");
      in_kwargs = true;
    }
    args.push_back(a.to_string());
  }
  if (is_vararg) args.emplace_back("...");
  std::string rets;
  if (is_varret) {
    rets = "...";
  } else if (returns.size() == 1 && returns[0].name.empty()) {
    rets = returns[0].to_string();  // a lone unnamed return is written bare
  } else {
    std::vector<std::string> rs;
    for (const auto& r : returns) rs.push_back(r.to_string());
    rets = fmt::format("({})", fmt::join(rs, ", "));
  }
  return fmt::format("{}({}) -> {}", full_name(), fmt::join(args, ", "), rets);
}

const Argument* FunctionSchema::find_argument(std::string_view arg_name) const {
  auto i = argument_index(arg_name);
  return i ? &arguments[*i] : nullptr;
}

std::optional<size_t> FunctionSchema::argument_index(std::string_view arg_name) const {
  for (size_t i = 0; i < arguments.size(); ++i)
    if (arguments[i].name == arg_name) return i;
  return std::nullopt;
}

std::string FunctionSchema::argument_names() const {
  std::vector<std::string> names;
  for (const auto& a : arguments) names.push_back(a.name);
  return names.empty() ? std::string("(none)") : fmt::format("{}", fmt::join(names, ", "));
}

bool FunctionSchema::is_mutable() const { return !mutated_arguments().empty(); }

std::vector<size_t> FunctionSchema::mutated_arguments() const {
  std::vector<size_t> out;
  for (size_t i = 0; i < arguments.size(); ++i)
    if (arguments[i].is_write()) out.push_back(i);
  return out;
}

std::optional<size_t> FunctionSchema::aliased_input_of_return(size_t i) const {
  if (i >= returns.size()) return std::nullopt;
  const Return& r = returns[i];
  // Compare like with like: a list return against list aliases, an element
  // alias against element aliases, then fall back to any shared set.
  auto matches = [&](const std::optional<AliasInfo>& ra, bool elem) -> std::optional<size_t> {
    if (!ra) return std::nullopt;
    for (size_t a = 0; a < arguments.size(); ++a) {
      const auto& aa = elem ? arguments[a].elem_alias : arguments[a].alias;
      if (aa && shares_set(*ra, *aa)) return a;
    }
    return std::nullopt;
  };
  if (auto a = matches(r.alias, false)) return a;
  if (auto a = matches(r.elem_alias, true)) return a;
  for (size_t a = 0; a < arguments.size(); ++a)
    for (const auto* ra : {&r.alias, &r.elem_alias})
      for (const auto* aa : {&arguments[a].alias, &arguments[a].elem_alias})
        if (*ra && *aa && shares_set(**ra, **aa)) return a;
  return std::nullopt;
}

}  // namespace symmflow
