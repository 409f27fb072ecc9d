#include "symmflow/passes/dce.h"

#include <algorithm>

namespace symmflow::passes {

bool is_effect(const ir::Node& n) {
  return n.has_effects() || (!n.functional() && !n.writes().empty());
}

bool DeadCodeElimination::run(ir::Graph& g) {
  std::vector<bool> live(g.num_values(), false);
  for (const ir::Value* v : g.outputs()) live[size_t(v->id())] = true;
  const auto& nodes = g.nodes();
  std::vector<ir::Node*> kept;
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    ir::Node* n = *it;
    bool used = is_effect(*n);
    for (const ir::Value* o : n->outputs()) used |= live[size_t(o->id())];
    if (!used) continue;
    kept.push_back(n);
    for (const auto& a : n->args()) a.for_each_value([&](ir::Value* v) { live[size_t(v->id())] = true; });
  }
  if (kept.size() == nodes.size()) return false;
  std::reverse(kept.begin(), kept.end());
  g.set_order(std::move(kept));
  return true;
}

}  // namespace symmflow::passes
