// Matched before run: before a program runs (eager or compiled), every rank's
// communication is compared, so that a send nobody receives, a receive of the
// wrong size or ranks issuing different collectives fail at once, on every rank,
// naming both ranks and both ops with file:line:col — instead of hanging until a
// timeout or, for a small send that fits the peer's mailbox, passing silently.
//
//   rank 0:  %s = c10d::isend(%x, 1, 0, "world")       # prog.sf:3:8, 4096 bytes
//   rank 1:  (no receive from rank 0 with tag 0)
//   -> "prog.sf: communication does not match across ranks: rank 0's send #1 to
//       rank 1 (tag 0, f32, 4096 bytes) at prog.sf:3:8 has no matching receive
//       on rank 1 (rank 1 receives nothing from rank 0 with tag 0); nothing has run"
//
// The rules (per world rank, in program order):
// - P2P on group "world": the k-th send from rank S to rank D with tag T
//   matches the k-th receive on D from S with tag T: same bytes and dtype. A
//   self-send matches the rank's own receive.
// - collectives (c10d's, and symm_mem ops: ir::is_symm_mem_collective): on each
//   group, every rank that issues collectives on it issues the same sequence
//   (op, dtype, bytes).
#pragma once
#include <string>
#include <vector>

#include "symmflow/core/dtype.h"
#include "symmflow/ir/graph.h"

namespace symmflow::exec {

struct CommOp {
  enum class Kind : uint8_t { send, recv, collective };
  Kind kind = Kind::collective;
  int peer = -1;  // send/recv: the other rank
  int64_t tag = 0;
  DType dtype = DType::f32;
  int64_t bytes = 0;
  std::string op;     // "c10d::all_reduce"
  std::string group;  // "world"
  std::string where;  // "prog.sf:3:8"
  // Not exchanged: where the op is in this rank's graph (its node's position,
  // the entry of a batch_isend_irecv) and the tensor it moves.
  int node = -1;
  int entry = 0;
  const ir::Value* value = nullptr;
};

// What one rank's program communicates, in program order.
std::vector<CommOp> comm_ops_of(const ir::Graph& g);

// One line per op and back (what the ranks exchange).
std::string serialize(const std::vector<CommOp>& ops);
std::vector<CommOp> deserialize(const std::string& text);

// The first mismatch among every rank's ops (indexed by world rank), as the
// message the ranks fail with; "" when everything matches.
std::string first_mismatch(const std::vector<std::vector<CommOp>>& by_rank);

// Collective over the world when it has more than one rank: gathers every
// rank's comm_ops_of(g) and throws the same ir::ParseError (a program error:
// `symmflow run` exits 2) on every rank on a mismatch.
void match_communication(const ir::Graph& g);

}  // namespace symmflow::exec
