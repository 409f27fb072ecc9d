// --explain: what the compiler did to one program, in words — copies it left and
// why, ops that run in place, where symmetric memory came from, each collective's
// algorithm, what compute each communication op overlaps, the memory plan. It
// lives in exec/ (not tools/) so that every front end prints the same text: the
// `symmflow` command line and the Python binding call this one function.
//
//   passes::optimize(*g);
//   fmt::print("{}", exec::explain(*g));
//   // explain @ring (rank 0 of 2): 12 ops, 3 run in place, 0 copies (0 bytes)
//   //   ...
#pragma once
#include <string>

#include "symmflow/exec/copy_report.h"
#include "symmflow/ir/graph.h"

namespace symmflow::exec {

// The first line is `explain @NAME (rank R of W): N ops, K run in place, C copies (B bytes)`;
// every further line is indented by two spaces. The copies are `copies` (a run's
// report, CompiledProgram::stats().copies: staged copies measured), or without
// it copy_report(optimized): inputs passed regular, staged copies not known yet.
std::string explain(const ir::Graph& optimized);
std::string explain(const ir::Graph& optimized, const CopyReport& copies);

}  // namespace symmflow::exec
