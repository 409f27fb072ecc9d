// --dump-ir, --explain and --dot for `symmflow compile` and `symmflow run`:
// what the compiler did, pass by pass, in the text IR.
#pragma once
#include <functional>
#include <string>
#include <string_view>

#include "symmflow/ir/graph.h"

namespace symmflow::tools {

// A dump hook: to stdout when dest is "-", else one file per step in dest
// (`03-cse.sf`), created if missing. Each dump is the step's graph with types.
std::function<void(std::string_view, const ir::Graph&)> make_ir_dumper(const std::string& dest);

// What the compiled graph does differently from the program: copies the compiler
// inserted and why, ops that run in place.
std::string explain(const ir::Graph& optimized);

// Graphviz: one box per node, an edge per value from producer to user.
std::string to_dot(const ir::Graph& g);

}  // namespace symmflow::tools
