// The compiler pipeline: one straight function, a named step per line
// (DESIGN.md §3). Each step can be dumped (`--dump-ir`) and is followed by the
// verifier when asked (tests and debug builds always ask).
//
//   optimize(g, {.dump = [](std::string_view pass, const ir::Graph& g) { ... }});
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "symmflow/ir/graph.h"
#include "symmflow/passes/pass.h"
#include "symmflow/passes/schedule.h"
#include "symmflow/passes/symm_placement.h"

namespace symmflow::passes {

// Debug builds or SYMMFLOW_VERIFY=1.
bool hazard_check_default();

struct PipelineOptions {
  bool verify_each = true;
  // Called with the name of each step ("input", "functionalize", ...) and the graph after it.
  std::function<void(std::string_view step, const ir::Graph& g)> dump;
  // Stop after this step ("" = run all): `--stop-after functionalize` runs the
  // functional program itself, which shows that functionalization alone is exact.
  std::string stop_after;
  PlacementOptions placement;
  // Overlap of communication with compute (`--no-overlap`, `--max-in-flight`).
  ScheduleOptions schedule;
  // Check the final schedule with the independent hazard verifier
  // (passes/hazard_check.h): in debug builds, under SYMMFLOW_VERIFY=1 (the test
  // suite sets it for every test) and with `--verify`.
  bool check_hazards = hazard_check_default();
  // 64 guard bytes after every planned buffer, checked after the node that makes
  // it (on in debug builds).
#ifdef NDEBUG
  bool sentinels = false;
#else
  bool sentinels = true;
#endif
};

void optimize(ir::Graph& g, const PipelineOptions& opts = {});

// The pass whose name() is `name` ("functionalize", "dce", ..., "memory_plan"),
// configured from opts (placement, schedule, sentinels): what optimize runs and
// what the golden tests run one by one. An Error lists the names otherwise.
std::unique_ptr<Pass> make_pass(std::string_view name, const PipelineOptions& opts = {});

// The step names, in order, for --help and tests.
const std::vector<std::string_view>& pipeline_steps();

}  // namespace symmflow::passes
