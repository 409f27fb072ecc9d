// symm_placement: decides, at compile time, where every buffer a communication
// op needs in symmetric memory comes from (RFC seed 004, done fully). It runs on
// the final program (after reinplace), so that it places the buffers the ops
// will really use — an op run in place on its input needs that input's buffer.
//
//   before                                     after (--explain)
//   %h = aten::mm(%x, %w1)                     %h: planned in the symmetric arena
//   %y = c10d::all_reduce_(%h, "sum", "world")     (its producer aten::mm writes there, 0 copies)
//
// Which arguments: those an op registers (register_symm_mem_args) or that the
// compile options hint (requires_symmetric_memory for an op without a
// registration) must be symmetric; the tensors of c10d collectives and the
// receive buffers of P2P should be (zero copy), else they take the staged path,
// which also works.
// Where each one's storage comes from (views are traced to their base):
// 1. produced by a built-in op (aten::, c10d::, symm_mem::) in the graph: that
//    op writes straight into a buffer of the symmetric arena (planned, 0 copies);
// 2. produced by an opaque custom op: it runs under a symmetric-allocation scope;
// 3. a graph input: copied into a symmetric buffer at run time, skipped when the
//    caller's tensor already is symmetric (then 0 copies). An input P2P
//    receives into in part (a halo row) mostly never gets here: receive_twins,
//    the step before, gives its received rows a symmetric twin; when that does
//    not apply, one copy in and one back per run however many transfers use
//    it, where staging would copy on both ends of every transfer;
// 4. needed symmetric in two different groups (conflicting constraints): no
//    placement, the staged path, and the decision says why.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "symmflow/passes/comm_ops.h"
#include "symmflow/passes/pass.h"

namespace symmflow::passes {

struct PlacementOptions {
  // false: only what ops require (registered or hinted) is placed; c10d
  // collectives and P2P take the staged path (for comparisons).
  bool enabled = true;
  // (op full name, argument): treat as requires_symmetric_memory for ops that
  // have no registration (the compiler-side alternative of seed 004).
  std::vector<std::pair<std::string, std::string>> hints;
};

class SymmPlacement : public Pass {
 public:
  explicit SymmPlacement(PlacementOptions o = {}) : o_(std::move(o)) {}
  std::string_view name() const override { return "symm_placement"; }
  bool run(ir::Graph& g) override;

 private:
  PlacementOptions o_;
};

}  // namespace symmflow::passes
