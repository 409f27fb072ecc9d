#include "symmflow/ir/printer.h"

#include <fmt/format.h>

#include <cmath>
#include <unordered_set>

#include "symmflow/ir/exec_plan.h"

namespace symmflow::ir {

namespace {

std::string print_double(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  std::string s = fmt::format("{}", d);  // shortest text that reads back exactly
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string print_ivalue(const IValue& v) {
  switch (v.kind()) {
    case IValue::Kind::None: return "None";
    case IValue::Kind::Int: return std::to_string(v.to_int());
    case IValue::Kind::Double: return print_double(v.to_double());
    case IValue::Kind::Bool: return v.to_bool() ? "true" : "false";
    case IValue::Kind::String: return quote(v.to_string());
    case IValue::Kind::DType: return std::string(dtype_name(v.to_dtype()));
    case IValue::Kind::List: {
      std::vector<std::string> parts;
      for (const auto& e : v.to_list()) parts.push_back(print_ivalue(e));
      return fmt::format("[{}]", fmt::join(parts, ", "));
    }
    case IValue::Kind::Tensor: return "<tensor>";  // constants are never tensors
  }
  return "?";
}

std::string print_arg(const Arg& a) {
  switch (a.kind) {
    case Arg::Kind::Const: return print_ivalue(a.constant);
    case Arg::Kind::Value: return "%" + a.value->name();
    case Arg::Kind::Expr: return a.expr->to_string();
    case Arg::Kind::List: {
      std::vector<std::string> parts;
      for (const auto& e : a.elems) parts.push_back(print_arg(e));
      return fmt::format("[{}]", fmt::join(parts, ", "));
    }
  }
  return "?";
}

namespace {

// " @symmetric+128" for a planned buffer, " symmetric" for one placed but not planned.
std::string placement(const Graph& g, const Value* v) {
  auto it = g.plan().slots.find(v->id());
  if (it != g.plan().slots.end())
    return fmt::format(" @{}+{}", it->second.arena == Arena::symmetric ? "symmetric" : "regular", it->second.offset);
  return v->symmetric() ? " symmetric" : "";
}

}  // namespace

std::string symmetric_regions(const MemoryPlan& plan) {
  if (plan.arena_bytes[1] == plan.collective_bytes) return "";
  return fmt::format(" (collectives +0..{}, P2P only +{}..{})", plan.collective_bytes, plan.collective_bytes,
                     plan.arena_bytes[1]);
}

std::string print_graph(const Graph& g, const PrintOptions& opts) {
  std::string out;
  std::vector<std::string> params, rets;
  for (const Value* v : g.inputs()) params.push_back(fmt::format("%{}: {}", v->name(), v->type_str()));
  for (const auto& t : g.output_types()) rets.push_back(t.str());
  if (opts.types && g.plan().planned)
    out += fmt::format("# memory plan: regular arena {} bytes, symmetric arena {} bytes{}\n", g.plan().arena_bytes[0],
                       g.plan().arena_bytes[1], symmetric_regions(g.plan()));
  out += fmt::format("graph @{}{}({}) -> ({}) {{\n", g.name(),
                     g.rank_set() ? " ranks " + g.rank_set()->str() + " " : "", fmt::join(params, ", "),
                     fmt::join(rets, ", "));
  if (opts.types)
    for (size_t i = 0; i < g.inputs().size(); ++i) {
      const Value* v = g.inputs()[i];
      if (!v->symmetric()) continue;
      // The executable plan skips the copy of an input overwritten before any read.
      const ExecPlan* p = g.exec_plan();
      const bool copied = !p || !p->built || p->input_copied_in.at(i);
      out += fmt::format("  # input %{}: {}{}\n", v->name(),
                         copied ? "copied into symmetric memory" : "in symmetric memory, not copied in (overwritten first)",
                         placement(g, v));
    }

  // A statement names its results when any of them is used.
  std::unordered_set<const Value*> used(g.outputs().begin(), g.outputs().end());
  for (const Node* n : g.nodes())
    for (const auto& a : n->args()) a.for_each_value([&](Value* v) { used.insert(v); });

  for (const Node* n : g.nodes()) {
    std::string line = "  ";
    bool named = false;
    for (const Value* o : n->outputs()) named |= used.count(o) > 0;
    if (named) {
      std::vector<std::string> names;
      for (const Value* o : n->outputs()) names.push_back("%" + o->name());
      line += fmt::format("{} = ", fmt::join(names, ", "));
    }
    if (n->functional()) line += "functional ";
    const auto& schema = n->schema();
    // Positional up to the last given positional argument, then given keywords.
    size_t last_pos = 0;
    for (size_t i = 0; i < schema.arguments.size(); ++i)
      if (!schema.arguments[i].kwarg_only && n->arg_given(i)) last_pos = i + 1;
    std::vector<std::string> args;
    for (size_t i = 0; i < schema.arguments.size(); ++i) {
      if (schema.arguments[i].kwarg_only) {
        if (n->arg_given(i)) args.push_back(schema.arguments[i].name + "=" + print_arg(n->arg(i)));
      } else if (i < last_pos) {
        args.push_back(print_arg(n->arg(i)));
      }
    }
    line += fmt::format("{}({})", n->op_name(), fmt::join(args, ", "));
    if (opts.types && (!n->outputs().empty() || n->algorithm() != Algorithm::none)) {
      std::vector<std::string> types;
      for (const Value* o : n->outputs()) types.push_back(o->type().str(true) + placement(g, o));
      line += fmt::format("  # {}", fmt::join(types, ", "));
      if (n->algorithm() != Algorithm::none)
        line += fmt::format("{}algorithm {}", types.empty() ? "" : "; ", algorithm_name(n->algorithm()));
      if (!n->note().empty()) line += "; " + n->note();
    }
    out += line + "\n";
  }
  std::vector<std::string> outs;
  for (const Value* v : g.outputs()) outs.push_back("%" + v->name());
  out += outs.empty() ? "  return\n" : fmt::format("  return {}\n", fmt::join(outs, ", "));
  out += "}\n";
  return out;
}

}  // namespace symmflow::ir
