// Which nodes communicate, and how a compiled program runs them (the contract
// between the scheduler, the executable plan, the executor and --explain):
// - P2P ops (c10d::isend, irecv_, batch_isend_irecv) are asynchronous, as in
//   eager: each returned handle is in flight until the c10d::wait_tensor on it,
//   and nothing but that wait reads the handle before it (a send's included).
// - A c10d collective is asynchronous in a compiled program when a
//   c10d::wait_tensor takes one of its results: started at the node, complete at
//   that wait (PyTorch's functional collectives). The scheduler gives every
//   collective such a wait; a collective nobody waits on completes at its node.
// - symm_mem ops and plugin ops with effects complete at their node.
// It is a property of the ops, so it lives in ir/: the passes, the executor and
// the communication matcher all classify with it.
#pragma once
#include <string>
#include <unordered_map>
#include <vector>

#include "symmflow/ir/graph.h"

namespace symmflow::ir {

enum class CommKind {
  none,        // compute (aten)
  p2p,         // asynchronous until its waits
  collective,  // c10d collective: asynchronous when waited on
  wait,        // c10d::wait_tensor
  effect,      // another op with effects (symm_mem::, plugins): completes at its node
};
CommKind comm_kind(const Node& n);
// An op that starts communication or has effects every rank must issue in the
// same order (everything but compute and waits).
inline bool issues_comm(CommKind k) {
  return k == CommKind::p2p || k == CommKind::collective || k == CommKind::effect;
}
inline bool issues_comm(const Node& n) { return issues_comm(comm_kind(n)); }

// A symm_mem:: op: an effect in the plan (it completes at its node), and a
// collective of its group_name to the ranks: the runtime's collectives run it
// (ops/c10d_kernels.cc), so every rank of the group issues it, it completes once
// each has started it, and a rank blocked in it drives the P2P engine as in any
// collective (runtime/progress.h). The communication matcher compares these
// across ranks, and the rendezvous model runs them as blocking collectives.
bool is_symm_mem_collective(const Node& n);

// The buffers a P2P op receives into (what it writes); empty for any other node.
std::vector<Value*> receive_buffers(const Node& n);

// A view and nothing else: compute that makes only a new geometry of its input
// (no kernel runs, no bytes move).
bool is_pure_view(const Node& n);

// Whether the op's namespace is built in (its outputs can be planned) rather
// than a plugin's (opaque: it runs under a symmetric-allocation scope).
bool is_builtin_op(const Node& n);
// The group an op communicates in (its `group_name` argument), or "".
std::string group_of(const Node& n);

// Whether the runtime may move v without staging (by its heap offset and
// layout): a view of a symmetric buffer, or of a graph input (the caller may
// pass it symmetric), that p2p_addressable accepts. A send is worth making
// rendezvous (ir::Instruction::rendezvous) only when one end is such a buffer:
// the data then moves once. `roots`: ir::storage_roots of v's graph.
bool moves_without_staging(const Value& v, const std::vector<Value*>& roots);
// Whether a peer can address a P2P buffer of this layout in place: one run of
// bytes (a row, a whole tensor), or a strided view whose compact layout fits a
// control event (core/compact_layout.h: a column, a face of a 3-D grid). A
// symmetric receive of such a layout is put into, a symmetric send read from;
// any other layout is packed through the staged path even when symmetric.
bool p2p_addressable(const TensorType& t);
// Whether a view is one run of bytes (a row, a whole tensor): what a
// collective needs to work on a symmetric buffer in place.
bool one_run(const TensorType& t);

// An int-list argument of a P2P op (peers, tags: constants, or expressions over
// rank/world) as it evaluates on `rank` of `world`: this rank's values, or a
// peer's (what the peer's copy of an SPMD batch sends to).
std::vector<int64_t> int_list_at(const Arg& a, int64_t rank, int64_t world);

// Per entry of a c10d::batch_isend_irecv: whether it is a send that may skip
// the eager path (ir::Instruction::rendezvous) and move its data once. In an
// SPMD program the peer runs this same batch, which posts its receives before
// its sends and before any wait; if one of them matches the send (its peer,
// evaluated on the peer's rank, is this rank; same tag), waiting for that post
// cannot deadlock. Worth it only when a buffer on one end moves without staging
// (the peer's receive buffer is placed as this rank's same entry is). Empty for
// other nodes and for graphs whose ranks run different code (the loader decides
// those: exec/rendezvous_sends.h). `roots`: ir::storage_roots of g.
std::vector<bool> rendezvous_sends(const Graph& g, const Node& n, const std::vector<Value*>& roots);

// Asynchronous starts and their waits in the graph's current order: for every
// c10d::wait_tensor whose argument is a result of a P2P op or a collective, that
// op (the first such wait of each result).
struct AsyncPairs {
  std::unordered_map<const Node*, const Node*> start_of;               // wait -> start
  std::unordered_map<const Node*, std::vector<const Node*>> waits_of;  // start -> waits
};
AsyncPairs async_pairs(const Graph& g);

}  // namespace symmflow::ir
