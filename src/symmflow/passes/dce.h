// dce: removes nodes whose results nobody uses and that have no effect.
// Collectives, P2P, waits, plugin ops and nodes that write an argument are
// effects and stay, whatever their results.
//
//   before                          after
//   %a = aten::mul(%x, 2.0)         %b = aten::add(%x, 1.0)
//   %b = aten::add(%x, 1.0)         c10d::all_reduce_(%x, "sum", "world")
//   c10d::all_reduce_(%x, ...)      return %b
//   return %b
#pragma once
#include "symmflow/passes/pass.h"

namespace symmflow::passes {

class DeadCodeElimination : public Pass {
 public:
  std::string_view name() const override { return "dce"; }
  bool run(ir::Graph& g) override;
};

// A node that must run even if nobody reads its results.
bool is_effect(const ir::Node& n);

}  // namespace symmflow::passes
