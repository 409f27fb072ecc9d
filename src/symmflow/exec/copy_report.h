// The copies one run of a compiled program makes, each with its origin: the one
// source that `--explain`'s header and lines, `--json`'s "copies" and
// CompiledProgram::stats() all read, so they cannot disagree.
//
//   input_to_symmetric     a graph input placement wants symmetric, passed as a
//                          regular tensor: copied into its symmetric buffer (and
//                          back after the run when the program writes it)
//   output_from_symmetric  a returned value whose buffer is in the symmetric
//                          arena: the caller gets a copy it may keep
//   staged                 the runtime's staged path (a collective or P2P buffer
//                          that is not symmetric or not contiguous): known only
//                          once a run measured it (add_staged)
//   reinplace              a clone the compiler inserted because the old value
//                          is still read, or a node left functional (copies
//                          what it writes)
//
// Everything but `staged` is the executable plan's (ir/exec_plan.h, built once
// by the pipeline), filtered by which inputs the caller passes symmetric; the
// executor makes exactly these copies (compiled_program_test checks its
// counters against this report).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "symmflow/ir/exec_plan.h"
#include "symmflow/ir/graph.h"

namespace symmflow::exec {

using ir::CopyOrigin;
using ir::kCopyOrigins;
using ir::origin_name;

struct CopyEntry {
  CopyOrigin origin = CopyOrigin::reinplace;
  std::string value;  // "%x" (the copied value), or "" for the staged total
  std::string why;    // one line for --explain
  ir::SourceLoc loc;  // the node that causes it (0:0 for inputs and outputs)
  int64_t count = 1;  // copies per run
  int64_t bytes = 0;  // per run
  const ir::Node* op = nullptr;  // staged: the communication op that staged it (nullptr: not one op)
};

struct CopyReport {
  std::vector<CopyEntry> entries;
  bool staged_measured = false;  // add_staged was called (a run measured the runtime's copies)
  int64_t count() const;
  int64_t bytes() const;
  int64_t count(CopyOrigin o) const;
  int64_t bytes(CopyOrigin o) const;
  // The runtime's staged copies of one run (dist::staged_copy_stats'
  // difference) that the communication op `op` caused (nullptr: not
  // attributed to one op); marks the report measured.
  void add_staged(const ir::Node* op, int64_t count, int64_t bytes);
};

// The copies one run of `optimized` makes when input i is passed symmetric
// exactly where symmetric_inputs[i] (missing entries: not symmetric): the
// executable plan's copies (ir/exec_plan.h), less those of inputs passed
// symmetric. An Error when the graph has no executable plan.
CopyReport copy_report(const ir::Graph& optimized, const std::vector<bool>& symmetric_inputs = {});

}  // namespace symmflow::exec
