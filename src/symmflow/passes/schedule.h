// schedule: orders the program so that communication starts as early and
// completes as late as the rules allow, leaving compute to run while it is in
// flight. Every collective gets its c10d::wait_tensor (the executor starts a
// waited collective and completes it at the wait, passes/comm_ops.h); P2P ops
// have theirs already.
//
//   before (program order)                     after
//   %y = aten::mm(%x, %w)                       %y = aten::mm(%x, %w)
//   %r = c10d::all_reduce_(%y, "sum", "world")  %r = c10d::all_reduce_(%y, "sum", "world")
//   %o = c10d::wait_tensor(%r)                  %z = aten::mm(%x2, %w)      <- overlaps
//   %z = aten::mm(%x2, %w)                      %o = c10d::wait_tensor(%r)
//   %s = aten::add(%o, %z)                      %s = aten::add(%o, %z)
//
// The rules (a node moves only within them):
// 1. Data: a node comes after the producers of what it reads.
// 2. Buffers: nodes that touch the same bytes of one storage (ir/alias.h: views,
//    in-place results and P2P handles share their base's storage), one of them
//    writing, keep their order. A start's window — from the start to its wait —
//    counts as reading what the op sends and writing what it receives or
//    produces, at both ends: a send buffer is not overwritten and a receive
//    buffer is not read before the wait, and the bytes a collective reads stay
//    untouched until it completes (a start's output aliases its input buffer
//    until the wait, as in XLA). Compute on other bytes, or only reading a send
//    buffer, may run inside the window. Eager semantics decide the order
//    compared with: a collective completes at its node in eager, so a node after
//    it in program order that touches its bytes comes after its wait.
// 3. Buffer reuse: the memory plan runs after this pass, over this order, and
//    keeps every buffer an op in flight reads or writes live until its wait
//    (memory_plan rule 6), so reuse can never put a value into bytes in flight.
// 4. Groups: every op that communicates or has effects (P2P, collectives,
//    symm_mem and plugin ops) is issued in program order, so every rank issues
//    the collectives and P2P of a group in the same order.
// 5. In flight: at most max_in_flight asynchronous ops are started and not yet
//    waited; a start that would exceed it waits for the oldest first (unless
//    rule 6 keeps every wait back: the program itself has that many in flight).
// 6. Blocking: a wait comes after every communication start that precedes it
//    in program order (eager order: a collective's added wait sits at the
//    collective). Starts only move earlier and waits only later, so no rank
//    blocks before issuing what its peers may need first: the set of waits
//    before each start only shrinks, and a program that completes eagerly
//    cannot deadlock compiled. Ranks that run different code depend on it: a
//    1F1B stage that waited for a backward gradient before sending the forward
//    activation its successor needs first would deadlock both.
// Choice among ready nodes: a start first (as early as possible), then compute
// in program order, and a wait only when nothing else can run (as late as
// possible) — then the op's other waits come along (its entries finish
// together, and the next start usually needs them all). With overlap off, a wait runs as soon as it can: every start is
// followed by its wait, the "compiled without overlap" baseline. The order is a
// function of the graph alone, so every rank computes the same schedule.
// passes/hazard_check checks the result independently.
#pragma once
#include "symmflow/passes/pass.h"

namespace symmflow::passes {

struct ScheduleOptions {
  bool overlap = true;
  int max_in_flight = 8;
};

class Schedule : public Pass {
 public:
  explicit Schedule(ScheduleOptions o = {}) : o_(o) {}
  std::string_view name() const override { return "schedule"; }
  bool run(ir::Graph& g) override;

 private:
  ScheduleOptions o_;
};

}  // namespace symmflow::passes
