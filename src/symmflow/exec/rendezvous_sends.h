// Rendezvous sends across ranks: at load, every rank's compiled program says
// where it posts, waits and blocks; from all of them each rank learns which of
// its sends may wait for their receive's post instead of going eager
// (ir::Instruction::rendezvous). An eager send copies its message into a slot
// and the receiver copies it out (2 staged copies) whenever it runs before the
// receive is posted, which in a pipeline depends on timing; a rendezvous send
// puts straight into the receiver's symmetric buffer (or lets the receiver read
// its own): 0 copies, every run. The exec_plan pass can decide this alone only
// for SPMD batches (the peer runs the same batch); ranks that run different code
// (pipeline stages, issue 17) need every rank's program, hence this step.
//
//   rank 0: %s0 = isend(%a0, 1, 0) ... wait(%s0)   rank 1: %q0 = irecv_(%b0, 0, 0) ... wait(%q0)
//   -> %s0 is rendezvous on rank 0 (%b0 is symmetric; rank 1 posts %q0 without
//      waiting for anything rank 0 does after %s0)
//
// The model. Each rank's program is its sequence of steps: posts (isend,
// irecv_, a batch's entries, an asynchronous collective's start), which never
// block, and blocking points (a c10d::wait_tensor, a collective nobody waits
// for). A wait on a receive completes once its sender has posted the send; on a
// rendezvous send, once the receiver has posted the receive; on an eager send,
// at once; on a collective, once every rank of its group has started it. These
// are the runtime's conditions: a rank blocked in any wait drives every
// transfer in flight (runtime/p2p/progress.h), so a transfer whose two posts
// exist completes, whichever protocol moves it.
//
// Why it cannot deadlock. Every completion condition only asks that other ranks
// have posted something, and what a rank has posted only grows: a step that can
// run stays runnable whatever the other ranks do. So the simulation below,
// which runs every rank as far as it can, reaches the one state that every
// execution of the programs reaches too, and if every rank reaches its end
// there, every real run does. The choice: make every send rendezvous whose data
// can move once (one end symmetric, ir::moves_without_staging), simulate;
// while some rank stays blocked on a rendezvous send, make that send eager
// again and simulate again. What remains completes in the model with the other
// sends eager, which is the premise every run without this step relies on
// already. symm_mem ops are blocking collectives of their group here
// (ir::is_symm_mem_collective). A program the model does not cover (P2P
// outside "world", plugin ops that communicate) keeps the exec_plan pass's
// choice.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "symmflow/ir/graph.h"

namespace symmflow::exec {

struct CommStep {
  enum class Kind : uint8_t { send, recv, collective, wait, unknown };
  Kind kind = Kind::unknown;
  int peer = -1;         // send/recv: the other world rank
  int64_t tag = 0;       // send/recv
  bool direct = false;   // send/recv: its buffer moves without staging
  bool blocks = false;   // collective: completes at its node (nobody waits for it)
  int target = -1;       // wait: the step it completes (-1: nothing in flight)
  std::string group;     // collective
  // Not exchanged: where a send's flag goes in this rank's plan.
  int instruction = -1;
  int entry = 0;
};

// One rank's steps, from its compiled graph's executable plan.
std::vector<CommStep> comm_steps_of(const ir::Graph& g);

std::string serialize(const std::vector<CommStep>& steps);
std::vector<CommStep> deserialize_steps(const std::string& text);

// Per rank (indexed by world rank), per step: whether that send is rendezvous.
// Empty when the model does not cover some rank's program or the sends and
// receives do not match (exec/comm_match.h reports that).
std::vector<std::vector<bool>> choose_rendezvous_sends(const std::vector<std::vector<CommStep>>& by_rank);

// Collective over the world when it has more than one rank (every rank loading
// its compiled program calls it): exchanges the steps and rewrites the
// rendezvous flags of g's executable plan with this rank's choice.
void plan_rendezvous_sends(ir::Graph& g);

}  // namespace symmflow::exec
