// The executable plan: what a compiled program runs, built once by the
// pipeline's last step (passes/exec_plan.h) and stored beside the memory plan.
// Everything downstream reads it and derives nothing: the executor
// (exec/compiled_program.h) runs its instructions, the hazard verifier checks
// exactly these instructions, and `--explain`, `--json`, stats() and `--trace`
// report from it. Before it existed the executor re-derived start/wait pairs,
// algorithms (from strings) and copies, and the reports each derived them again;
// the copy counts of `--explain` and `--json` disagreed on some programs.
//
//   instruction 3  c10d::all_reduce %r   collective, starts async, 1 wait, group "world", one_shot
//   instruction 7  c10d::wait_tensor     wait of instruction 3
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "symmflow/ir/graph.h"

namespace symmflow::ir {

// Why a run copies bytes (the copy report's origins, exec/copy_report.h).
enum class CopyOrigin : uint8_t { input_to_symmetric, output_from_symmetric, staged, reinplace };
inline constexpr CopyOrigin kCopyOrigins[] = {CopyOrigin::input_to_symmetric, CopyOrigin::output_from_symmetric,
                                              CopyOrigin::staged, CopyOrigin::reinplace};
// The JSON keys: "inputs_to_symmetric", "outputs_from_symmetric", "staged", "reinplace".
std::string_view origin_name(CopyOrigin o);

// One copy a run makes (staged copies are measured by the run, not planned).
struct PlannedCopy {
  CopyOrigin origin = CopyOrigin::reinplace;
  std::string value;  // "%x": the copied value
  std::string why;    // one line for --explain
  SourceLoc loc;      // the node that causes it (0:0 for inputs and outputs)
  int64_t bytes = 0;  // per run
  // A copy of graph input `input` (into its symmetric buffer, back, or out of
  // it): made only when the caller passes that input as a regular tensor. -1:
  // always made.
  int input = -1;
};

// What an instruction is, for the executor and the reports.
enum class InstrKind : uint8_t { compute, view, p2p, collective, wait, effect };

struct Instruction {
  const Node* node = nullptr;
  InstrKind kind = InstrKind::compute;
  std::vector<int> planned;  // ids of the results that have a planned buffer, in order
  std::vector<int> fresh;    // ids of the results with storage of their own (planned or not), in order
  bool scoped = false;       // results the plan cannot place: allocated symmetric around the node
  Algorithm algorithm = Algorithm::none;
  bool start_async = false;  // a collective some wait completes (started at its node)
  std::vector<int> waits;    // an asynchronous start: the instructions that wait for it
  int start = -1;            // a wait: the instruction it completes (-1: a wait on nothing in flight)
  // A batch_isend_irecv: per entry, a send whose matching receive is in the
  // peer's same batch and whose data can move once (a symmetric buffer on one
  // end): it waits for the post instead of taking the eager path's two copies.
  std::vector<bool> rendezvous;
  std::string group;         // the group it communicates in ("" for compute)
  std::string label;         // "aten::mm %y" (the trace and --explain)
};

struct ExecPlan {
  bool built = false;
  std::vector<Instruction> instructions;  // the graph's nodes, in order
  std::vector<bool> input_symmetric;      // per graph input: placement wants it symmetric
  std::vector<bool> input_copied_in;      // ... and, passed regular, is copied in (not when overwritten whole before any read)
  std::vector<bool> input_written;        // per graph input: the program writes its storage
  std::vector<PlannedCopy> copies;        // in report order: inputs, the compiler's copies, outputs
};

}  // namespace symmflow::ir
