// The text form of a Graph (docs/ir.md). parse_graph(print_graph(g)) builds a
// graph equal to g: same ops and overloads, arguments, results and types.
//
//   std::cout << print_graph(g);                          // what the parser reads
//   std::cout << print_graph(g, {.types = true});        // + "# f32[4]" per statement
#pragma once
#include <string>

#include "symmflow/ir/graph.h"

namespace symmflow::ir {

struct PrintOptions {
  bool types = false;  // a trailing comment with each result's type and layout
};

std::string print_graph(const Graph& g, const PrintOptions& opts = {});
// One argument as the parser reads it: `%x`, `2.0`, `"sum"`, `[0, 1]`, `(rank+1)%world`.
std::string print_arg(const Arg& a);
// " (collectives +0..C, P2P only +C..S)" when the symmetric arena has a P2P-only region, else "".
std::string symmetric_regions(const MemoryPlan& plan);
std::string print_ivalue(const IValue& v);

}  // namespace symmflow::ir
