// cse: a pure node equal to an earlier one (same op, same arguments) is replaced
// by it. Effects (collectives, P2P, waits, writes, plugin ops) are never merged,
// and nothing is merged across them in a way that changes what a value holds:
// in the functional IR a value never changes, so equal nodes give equal results.
// Factories (aten::zeros([n]): fresh buffers, usually made to be written) are not
// merged either: reinplace would copy them apart again.
//
//   before                          after
//   %a = aten::mul(%x, 2.0)         %a = aten::mul(%x, 2.0)
//   %b = aten::mul(%x, 2.0)         %c = aten::add(%a, %a)
//   %c = aten::add(%a, %b)
#pragma once
#include "symmflow/passes/pass.h"

namespace symmflow::passes {

class CommonSubexpressionElimination : public Pass {
 public:
  std::string_view name() const override { return "cse"; }
  bool run(ir::Graph& g) override;
};

}  // namespace symmflow::passes
