// hazard_check: an independent verifier of the final schedule (DESIGN.md §3, step
// 10). It simulates the instruction list (g.nodes()) over the planned buffers
// with the executor's contract and rejects any order or plan under which a rank
// would read or write the wrong bytes, or deadlock against its peers:
//
//   %s, %r = c10d::batch_isend_irecv([...], [%a, %y], "world")   # %a read, %y written until the waits
//   %t = aten::mul(%y, 2.0)          <- read_before_ready: %y is still being received
//   aten::add_(%a, 1.0)              <- overwrite_in_flight: %a is still being sent
//   c10d::wait_tensor(%s)
//   %y.1 = c10d::wait_tensor(%r)
//
// The contract it checks against (nothing else: it shares no code with the
// scheduler, so a bug there cannot hide itself here):
// - P2P (`isend`, `irecv_`, each entry of `batch_isend_irecv`) is in flight from
//   its node to the first `c10d::wait_tensor` whose argument is that entry's
//   result (the handle). A c10d collective is in flight from its node to the wait
//   of each of its results iff some later wait takes one of them; otherwise it
//   completes at its node, as do symm_mem:: and plugin ops. In flight, an op reads
//   its inputs and writes its results' bytes.
// - A value's bytes are its storage root's planned slot (arena + offset) plus its
//   own extent, or the root's own storage when the plan holds no slot for it.
//   Ownership of arena bytes is simulated (which root last wrote each byte): a
//   read of bytes another root wrote meanwhile means two live buffers overlap.
// - Per process group, the communication ops (c10d, symm_mem:: and plugin ops
//   with a `group_name`) keep their program order: every rank issues them alike.
// - A wait never comes before a communication op that precedes it in eager
//   order (a collective's wait sits at its collective): a peer may need
//   what that op sends before it can complete what this rank waits for, so a
//   program that completes eagerly could deadlock compiled (ranks that run
//   different code: a 1F1B pipeline stage).
//
// - The executable plan (ir/exec_plan.h), when the graph has one, is exactly
//   this: its instructions are the nodes in order, each asynchronous op starts
//   and completes where the contract above puts it, planned buffers are the
//   slotted results, and inputs it copies into symmetric memory have slots (and
//   are copied back when written). The executor runs the plan, so the plan is
//   what is verified.
//
// Checks run in this order, the first failure throws: group_order, wait_before_start, use_before_def,
// never_waited, plan_mismatch, buffer_too_small, then the simulation (read_before_ready,
// overwrite_in_flight, overlapping_buffers), then overlapping_buffers by liveness
// (two buffers live at once share arena bytes, whether read again or not). It is linear in the nodes plus the
// in-flight operations each access is compared with (log-time byte ownership).
#pragma once
#include <span>
#include <string>
#include <vector>

#include "symmflow/core/error.h"
#include "symmflow/passes/pass.h"

namespace symmflow::passes {

struct HazardError : Error {
  enum class Kind {
    use_before_def,       // a node reads a value before its producer ran (or one never produced)
    read_before_ready,    // reads bytes an in-flight op still writes, or a handle before its wait
    overwrite_in_flight,  // writes bytes an in-flight op of the same buffer still reads or writes
    overlapping_buffers,  // two live buffers share arena bytes (or an in-flight op's bytes are reused)
    buffer_too_small,     // a slot smaller than a value living in it, or past its arena's end
    group_order,          // a group's communication ops are not in program order
    never_waited,         // an async op is still in flight at the end
    plan_mismatch,        // the executable plan is not this schedule (ir/exec_plan.h)
    wait_before_start,    // a wait moved before a communication op that precedes it in program order
  };
  HazardError(Kind k, const std::string& msg, const ir::Node* node = nullptr, const ir::Node* other = nullptr)
      : Error(msg), kind(k), node(node), other(other) {}
  Kind kind;
  const ir::Node* node;   // the node that does the wrong thing (nullptr: the end of the program)
  const ir::Node* other;  // the node it clashes with (the in-flight op, the producer...), or nullptr
};

const char* to_string(HazardError::Kind k);

// Throws HazardError for the first hazard of g's final instruction list.
// `program_order`: the nodes before scheduling, for the per-group order (wait_tensor
// nodes are ignored there, since the scheduler adds them).
void check_hazards(const ir::Graph& g, std::span<const ir::Node* const> program_order);

// The pass form, for the pipeline: takes the order before scheduling, changes nothing.
class HazardCheck : public Pass {
 public:
  explicit HazardCheck(std::vector<const ir::Node*> program_order) : order_(std::move(program_order)) {}
  std::string_view name() const override { return "hazard_check"; }
  bool run(ir::Graph& g) override {
    check_hazards(g, order_);
    return false;
  }

 private:
  std::vector<const ir::Node*> order_;
};

}  // namespace symmflow::passes
