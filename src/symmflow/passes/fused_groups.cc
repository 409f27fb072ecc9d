#include "symmflow/passes/fused_groups.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

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

ir::Node* make_fused_node(ir::Graph& g, std::string_view op, const FusedProgram& p, const ir::Node& last) {
  std::vector<ir::Arg> list;
  for (ir::Value* v : p.inputs) list.emplace_back(v);
  Operator& fused = Dispatcher::instance().get(op);
  // The fused node returns what the group's last node returned: its type is
  // known, and the fused Meta kernel (parse the program, run every step's
  // kernel) need not run again here (the verifier still checks it).
  return g.make_node_typed(fused, {ir::Arg::list(std::move(list)), ir::Arg(IValue(ops::format_fused_program(p.steps)))},
                           last.loc(), {last.output(0)->type()});
}

void place_fused(ir::Graph& g, const std::vector<std::pair<std::vector<ir::Node*>, ir::Node*>>& fused) {
  // By position in program order: whether the node is a member of a group, and
  // the fused node that takes its place (nullptr: none, it goes). Vectors, not
  // a hash map of every member: this runs on 100k-node graphs.
  std::vector<bool> member(g.size(), false);
  std::vector<ir::Node*> place(g.size(), nullptr);
  for (const auto& [members, node] : fused) {
    for (const ir::Node* m : members) member[g.position(m)] = true;
    place[g.position(members.back())] = node;
  }
  std::vector<ir::Node*> order;
  order.reserve(g.size());
  for (size_t p = 0; p < g.size(); ++p) {
    if (!member[p]) order.push_back(g.nodes()[p]);
    else if (place[p]) order.push_back(place[p]);
  }
  g.set_order(std::move(order));
  for (const auto& [members, node] : fused) {
    g.name_after(node->output(0), members.back()->output(0));
    g.replace_uses(members.back()->output(0), node->output(0));
  }
}

}  // namespace symmflow::passes
