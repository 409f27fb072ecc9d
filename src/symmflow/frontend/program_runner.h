// What `symmflow run FILE.sf` does on each rank: parse the program for this
// rank, make its inputs (seeded fill or .npy files), run it eagerly and/or
// compiled, compare the two bitwise, save outputs. The command line (tools/)
// adds the launcher, the JSON report and the exit codes.
//
//   RunRequest req{.file = "ring.sf", .mode = RunMode::check};
//   RankReport r = run_on_this_rank(req);     // after dist::init()
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "symmflow/exec/compiled_program.h"
#include "symmflow/exec/timeline.h"
#include "symmflow/passes/schedule.h"
#include "symmflow/ir/graph.h"
#include "symmflow/passes/symm_placement.h"

namespace symmflow::frontend {

using exec::ProgramStats;
using exec::Timeline;

enum class RunMode { eager, compiled, both, check };

struct RunRequest {
  std::string file;
  RunMode mode = RunMode::compiled;
  int iters = 1;
  uint64_t seed = 0;
  std::string inputs_dir;  // "" = seeded fill only
  std::string save_dir;    // "" = save nothing
  // Called with each pipeline step and the graph after it (--dump-ir).
  std::function<void(std::string_view step, const ir::Graph& g)> dump;
  std::string stop_after;  // compile only up to this pipeline step
  passes::PlacementOptions placement;
  bool symmetric_inputs = false;  // the caller's inputs are symmetric tensors
  passes::ScheduleOptions schedule;  // overlap on or off, ops in flight
  bool check_hazards = false;        // run the hazard verifier after compiling (--verify)
  bool trace = false;                // record the last compiled run (RankReport::trace)
  bool explain = false;              // RankReport::explain after the compiled runs
  bool keep_outputs = false;         // RankReport::outputs (what `symmflow run` prints)
};

struct RankReport {
  int rank = 0;
  bool compared = false;
  bool match = true;
  std::string first_difference;  // "output 0 (%out) at index 17: eager 1.5, compiled 1.25"
  int outputs_compared = 0, inputs_compared = 0;
  double eager_s = 0, compiled_s = 0;  // median per run
  ProgramStats stats;
  int64_t eager_peak_bytes = 0;
  uint64_t eager_staged_copies = 0, eager_staged_copy_bytes = 0;  // the same, eager runs
  int64_t output_bytes = 0;                            // what a compiled run returns
  std::vector<std::pair<std::string, std::string>> algorithms;  // (node, algorithm)
  std::vector<ir::PlacementDecision> decisions;
  Timeline trace;  // the last compiled run, when asked
  std::string explain;  // exec::explain of the compiled program with its last run's copies, when asked
  // The graph this rank ran: "@name", or "@name ranks 1..world-2" when the
  // file's ranks run different code (ir/rank_set.h).
  std::string program;
  // When asked (keep_outputs): each output's name and a contiguous copy of what
  // the last run returned (compiled when it ran, else eager).
  std::vector<std::pair<std::string, Tensor>> outputs;
};

// Needs dist::init(). Errors (parse, verify, run) propagate as Error / ParseError.
RankReport run_on_this_rank(const RunRequest& req);

// Refuses (Error naming the files, the program's inputs and a remedy) a .npy in
// `dir` that no rank would read, given the graph each rank runs (graphs[r] is
// rank r's): a misnamed file would otherwise leave its input seeded, silently.
// NAME.rank<R>.npy for R >= graphs.size() is kept when NAME is an input (the
// folder may serve a larger job too); files of other extensions are not looked at.
void check_inputs_dir(const std::string& dir, const std::vector<const ir::Graph*>& graphs);

}  // namespace symmflow::frontend
