#include "symmflow/passes/cse.h"

#include <unordered_map>

#include "symmflow/ir/printer.h"
#include "symmflow/passes/dce.h"

namespace symmflow::passes {

namespace {

// A key that is equal exactly when two nodes compute the same thing: the overload
// and every argument (values by identity, constants as printed: their exact
// spelling round-trips doubles; rank/world expressions by their text).
// An expression is not keyed by its value: `rank*4` and `0` are equal on rank 0
// only, and every rank must make the same decisions (the same program shape).
void append_key(std::string& k, const ir::Arg& a) {
  switch (a.kind) {
    case ir::Arg::Kind::Value:  // by identity: its id, not its printed name
      k += '%';
      k += std::to_string(a.value->id());
      return;
    case ir::Arg::Kind::List:
      k += '[';
      for (const auto& e : a.elems) {
        append_key(k, e);
        k += ',';
      }
      k += ']';
      return;
    case ir::Arg::Kind::Const:
    case ir::Arg::Kind::Expr: k += ir::print_arg(a); return;
  }
}

std::string key_of(const ir::Node& n) {
  // The overload by identity (one Operator per full name): its address, not its
  // name built as a string per node.
  const Operator* op = &n.op();
  std::string k(reinterpret_cast<const char*>(&op), sizeof(op));
  for (const auto& a : n.args()) {
    k += '\x1f';
    append_key(k, a);
  }
  return k;
}

// A factory (aten::zeros([n]), no value among its arguments) makes a fresh
// buffer, usually to be written: two merged would be one buffer, and reinplace
// would copy one apart again (a double buffer made of two zeros became one
// buffer plus a clone per receive).
bool is_factory(const ir::Node& n) {
  for (const auto& a : n.args())
    if (a.has_values()) return false;
  return !n.outputs().empty() && n.output(0)->is_tensor();
}

}  // namespace

bool CommonSubexpressionElimination::run(ir::Graph& g) {
  std::unordered_map<std::string, ir::Node*> seen;
  seen.reserve(g.size());
  std::unordered_map<ir::Value*, ir::Value*> subst;
  std::vector<ir::Node*> kept;
  bool changed = false;
  for (ir::Node* n : g.nodes()) {
    g.map_operands(n, [&](ir::Value* v) {
      auto it = subst.find(v);
      return it == subst.end() ? v : it->second;
    });
    if (is_effect(*n) || n->functional() || is_factory(*n)) {
      kept.push_back(n);
      continue;
    }
    auto [it, inserted] = seen.emplace(key_of(*n), n);
    if (inserted) {
      kept.push_back(n);
      continue;
    }
    for (size_t i = 0; i < n->outputs().size(); ++i) subst[n->output(i)] = it->second->output(i);
    changed = true;
  }
  if (!changed) return false;
  std::vector<ir::Value*> outs;
  for (ir::Value* v : g.outputs()) outs.push_back(subst.count(v) ? subst[v] : v);
  g.set_outputs(outs);
  g.set_order(std::move(kept));
  return true;
}

}  // namespace symmflow::passes
