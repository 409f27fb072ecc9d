// Which nodes communicate, and how a compiled program runs them (the contract
// between the scheduler, the executor and --explain):
// - P2P ops (c10d::isend, irecv_, batch_isend_irecv) are asynchronous, as in
//   eager: each returned handle is in flight until the c10d::wait_tensor on it,
//   and nothing but that wait reads the handle before it (a send's included).
// - A c10d collective is asynchronous in a compiled program when a
//   c10d::wait_tensor takes one of its results: started at the node, complete at
//   that wait (PyTorch's functional collectives). The scheduler gives every
//   collective such a wait; a collective nobody waits on completes at its node.
// - symm_mem ops and plugin ops with effects complete at their node.
#pragma once
#include <unordered_map>
#include <vector>

#include "symmflow/ir/graph.h"

namespace symmflow::passes {

enum class CommKind {
  none,        // compute (aten)
  p2p,         // asynchronous until its waits
  collective,  // c10d collective: asynchronous when waited on
  wait,        // c10d::wait_tensor
  effect,      // another op with effects (symm_mem::, plugins): completes at its node
};
CommKind comm_kind(const ir::Node& n);
// An op that starts communication or has effects every rank must issue in the
// same order (everything but compute and waits).
inline bool issues_comm(CommKind k) {
  return k == CommKind::p2p || k == CommKind::collective || k == CommKind::effect;
}
inline bool issues_comm(const ir::Node& n) { return issues_comm(comm_kind(n)); }

// Asynchronous starts and their waits in the graph's current order: for every
// c10d::wait_tensor whose argument is a result of a P2P op or a collective, that
// op (the first such wait of each result).
struct AsyncPairs {
  std::unordered_map<const ir::Node*, const ir::Node*> start_of;               // wait -> start
  std::unordered_map<const ir::Node*, std::vector<const ir::Node*>> waits_of;  // start -> waits
};
AsyncPairs async_pairs(const ir::Graph& g);

}  // namespace symmflow::passes
