// race_check: rejects a program that is racy in eager mode (DESIGN.md §3), on
// the input graph, before functionalize. In eager, P2P ops (c10d::isend,
// c10d::irecv_, each entry of c10d::batch_isend_irecv) are asynchronous until a
// c10d::wait_tensor retires them; collectives are synchronous. So while a P2P op
// is in flight, no other op may read bytes it receives into, nor write bytes it
// sends or receives into (through any view: bytes, not names, are compared).
//
//   rejected                                         accepted (the same, reordered)
//   %s, %r = c10d::batch_isend_irecv(..., [%x, %y])  %s, %r = c10d::batch_isend_irecv(..., [%x, %y])
//   %a = aten::add(%y, 1.0)     <- reads %y          %t = aten::mul(%x, 2.0)   # reading a send buffer is fine
//   c10d::wait_tensor(%s)                            c10d::wait_tensor(%s)
//   c10d::wait_tensor(%r)                            c10d::wait_tensor(%r)
//                                                    %a = aten::add(%y, 1.0)
//
// The simulation follows eager's rules exactly (ops/work_registry.h):
// - an op's bytes are its value's extent in its storage root (ir/alias.h), from
//   the type's offset, sizes and strides, compared exactly (core/overlap.h's
//   views_share_bytes: the even and the odd columns do not meet);
// - c10d::wait_tensor(t) retires the ops registered on t's tensor (the buffer a
//   P2P op took, which its handle, an in-place result and a wait's result are
//   other names of), or, when there are none, every op on t's storage;
// - a batch posts its receives before its sends, so its own entries may race
//   each other (a send of bytes the same batch receives into);
// - the end of the program reads what is still in flight (never waited).
// Views (their creation reads nothing) and wait_tensor are not accesses.
//
// The error names both ops with their `file:line:col` and the wait to move:
//   ring.sf:7:3: error: race: aten::add reads %y0 while c10d::batch_isend_irecv at
//   ring.sf:4:3 still receives into it; wait for it first (c10d::wait_tensor(%r0) at ring.sf:9:3)
// It is a ParseError (the program's fault: `symmflow run`/`compile` exit 2).
#pragma once
#include <string>

#include "symmflow/ir/parser.h"
#include "symmflow/passes/pass.h"

namespace symmflow::passes {

struct RaceError : ir::ParseError {
  RaceError(const std::string& msg, const ir::Node* node, const ir::Node* in_flight)
      : ir::ParseError(msg), node(node), in_flight(in_flight) {}
  const ir::Node* node;       // the access (nullptr: the end of the program)
  const ir::Node* in_flight;  // the P2P op it races
};

// Throws RaceError for the first race of g in program order.
void check_races(const ir::Graph& g);

// The pipeline step: checks, changes nothing.
class RaceCheck : public Pass {
 public:
  std::string_view name() const override { return "race_check"; }
  bool run(ir::Graph& g) override {
    check_races(g);
    return false;
  }
};

}  // namespace symmflow::passes
