#include "symmflow/passes/pipeline.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "symmflow/core/params.h"
#include "symmflow/ir/verifier.h"
#include "symmflow/passes/cse.h"
#include "symmflow/passes/dce.h"
#include "symmflow/passes/functionalize.h"
#include "symmflow/passes/hazard_check.h"
#include "symmflow/passes/collective_lowering.h"
#include "symmflow/passes/memory_plan.h"
#include "symmflow/passes/race_check.h"
#include "symmflow/passes/reinplace.h"
#include "symmflow/passes/symm_placement.h"

namespace symmflow::passes {

const std::vector<std::string_view>& pipeline_steps() {
  static const std::vector<std::string_view> steps = {"input",     "race_check",     "functionalize",  "dce",
                                                      "cse",       "reinplace",      "dce.final",
                                                      "symm_placement", "collective_lowering", "schedule",
                                                      "memory_plan", "hazard_check"};
  return steps;
}

bool hazard_check_default() {
#ifdef NDEBUG
  return params::flag("SYMMFLOW_VERIFY");
#else
  return true;
#endif
}

void optimize(ir::Graph& g, const PipelineOptions& opts) {
  const auto& steps = pipeline_steps();
  SF_CHECK(opts.stop_after.empty() || std::find(steps.begin(), steps.end(), opts.stop_after) != steps.end(),
           "unknown pipeline step '{}' (the steps: {})", opts.stop_after, fmt::join(steps, ", "));
  bool stopped = false;
  auto step = [&](std::string_view name, Pass* pass) {
    if (stopped) return;
    stopped = name == opts.stop_after;
    if (pass) pass->run(g);
    if (opts.verify_each || !pass) ir::verify(g, name);
    if (opts.dump) opts.dump(name, g);
  };
  RaceCheck race_check;
  Functionalize functionalize;
  DeadCodeElimination dce;
  CommonSubexpressionElimination cse;
  Reinplace reinplace;
  SymmPlacement placement(opts.placement);
  CollectiveLowering lowering;
  Schedule schedule(opts.schedule);
  MemoryPlanning memory_plan(opts.sentinels);
  step("input", nullptr);
  // Racy in eager (a receive buffer read before its wait...): the program's
  // fault, named on the source as written.
  step("race_check", &race_check);
  step("functionalize", &functionalize);
  step("dce", &dce);
  step("cse", &cse);
  step("reinplace", &reinplace);
  step("dce.final", &dce);
  // Placement decides on the final buffers: after reinplace, an op that runs in
  // place on its input needs that input's buffer symmetric.
  step("symm_placement", &placement);
  step("collective_lowering", &lowering);
  // Comm starts early, waits late; the plan follows the final order.
  const std::vector<const ir::Node*> program_order(g.nodes().begin(), g.nodes().end());
  step("schedule", &schedule);
  step("memory_plan", &memory_plan);
  // The final order and plan, checked by a simulation that shares no code with
  // the scheduler (tests, debug builds, --verify).
  if (opts.check_hazards) {
    HazardCheck hazards(program_order);
    step("hazard_check", &hazards);
  }
}

}  // namespace symmflow::passes
