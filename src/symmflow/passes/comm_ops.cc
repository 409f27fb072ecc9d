#include "symmflow/passes/comm_ops.h"

#include <unordered_set>

namespace symmflow::passes {

CommKind comm_kind(const ir::Node& n) {
  const auto& s = n.schema();
  // aten first: nearly every node is compute (Node::has_effects: not aten).
  if (s.ns == "aten") return CommKind::none;
  if (s.ns == "c10d") {
    if (s.name == "wait_tensor") return CommKind::wait;
    if (s.name == "isend" || s.name == "irecv_" || s.name == "batch_isend_irecv") return CommKind::p2p;
    return CommKind::collective;
  }
  return n.has_effects() ? CommKind::effect : CommKind::none;
}

AsyncPairs async_pairs(const ir::Graph& g) {
  AsyncPairs p;
  std::unordered_set<const ir::Value*> waited;
  for (const ir::Node* n : g.nodes()) {
    if (comm_kind(*n) != CommKind::wait || n->arg(0).kind != ir::Arg::Kind::Value) continue;
    const ir::Value* h = n->arg(0).value;
    const ir::Node* s = h->producer();
    if (!s || !waited.insert(h).second) continue;
    CommKind k = comm_kind(*s);
    if (k != CommKind::p2p && k != CommKind::collective) continue;
    p.start_of[n] = s;
    p.waits_of[s].push_back(n);
  }
  return p;
}

}  // namespace symmflow::passes
