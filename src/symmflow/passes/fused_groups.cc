#include "symmflow/passes/fused_groups.h"

#include <algorithm>
#include <unordered_map>

#include "symmflow/library/dispatcher.h"

namespace symmflow::passes {

FusedProgram fused_program(const std::vector<ir::Node*>& members) {
  FusedProgram p;
  std::unordered_map<const ir::Value*, int> step_of;
  for (const ir::Node* m : members) {
    ops::FusedStep s{m->op_name(), {}};
    for (const ir::Arg& a : m->args()) {
      ops::FusedOperand o;
      if (a.kind == ir::Arg::Kind::Const) {
        o.constant = a.constant;
      } else if (auto it = step_of.find(a.value); it != step_of.end()) {
        o.kind = ops::FusedOperand::Kind::step;
        o.index = it->second;
      } else {
        auto at = std::find(p.inputs.begin(), p.inputs.end(), a.value);
        if (at == p.inputs.end()) at = p.inputs.insert(p.inputs.end(), a.value);
        o.kind = ops::FusedOperand::Kind::input;
        o.index = int(at - p.inputs.begin());
      }
      s.args.push_back(std::move(o));
    }
    step_of[m->output(0)] = int(p.steps.size());
    p.steps.push_back(std::move(s));
  }
  return p;
}

ir::Node* make_fused_node(ir::Graph& g, std::string_view op, const FusedProgram& p, const ir::SourceLoc& loc) {
  std::vector<ir::Arg> list;
  for (ir::Value* v : p.inputs) list.emplace_back(v);
  Operator& fused = Dispatcher::instance().get(op);
  return g.make_node(fused, {ir::Arg::list(std::move(list)), ir::Arg(IValue(ops::format_fused_program(p.steps)))},
                     /*functional=*/false, loc);
}

void place_fused(ir::Graph& g, const std::vector<std::pair<std::vector<ir::Node*>, ir::Node*>>& fused) {
  std::unordered_map<const ir::Node*, ir::Node*> place;  // every member -> the fused node, or nullptr
  for (const auto& [members, node] : fused)
    for (const ir::Node* m : members) place[m] = m == members.back() ? node : nullptr;
  std::vector<ir::Node*> order;
  for (ir::Node* n : g.nodes()) {
    auto it = place.find(n);
    if (it == place.end()) order.push_back(n);
    else if (it->second) order.push_back(it->second);
  }
  g.set_order(std::move(order));
  for (const auto& [members, node] : fused) {
    g.name_after(node->output(0), members.back()->output(0));
    g.replace_uses(members.back()->output(0), node->output(0));
  }
}

}  // namespace symmflow::passes
