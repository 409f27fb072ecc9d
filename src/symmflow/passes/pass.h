// A compiler pass: one file each (DESIGN.md §3), a name for --dump-ir, and a run
// that says whether it changed the graph. Passes that need a fixed point are run
// by the pipeline, not by themselves.
#pragma once
#include <string_view>

#include "symmflow/ir/graph.h"

namespace symmflow::passes {

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string_view name() const = 0;
  virtual bool run(ir::Graph& g) = 0;
};

}  // namespace symmflow::passes
