#include "symmflow/passes/pipeline.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "symmflow/core/params.h"
#include "symmflow/ir/verifier.h"
#include "symmflow/passes/cse.h"
#include "symmflow/passes/dce.h"
#include "symmflow/passes/exec_plan.h"
#include "symmflow/passes/functionalize.h"
#include "symmflow/passes/fuse_pointwise.h"
#include "symmflow/passes/fuse_rows.h"
#include "symmflow/passes/hazard_check.h"
#include "symmflow/passes/collective_lowering.h"
#include "symmflow/passes/memory_plan.h"
#include "symmflow/passes/race_check.h"
#include "symmflow/passes/receive_twins.h"
#include "symmflow/passes/reinplace.h"
#include "symmflow/passes/symm_placement.h"

namespace symmflow::passes {

const std::vector<std::string_view>& pipeline_steps() {
  static const std::vector<std::string_view> steps = {"input",     "race_check",     "functionalize",  "dce",
                                                      "cse",       "fuse_rows",      "fuse_pointwise", "reinplace",      "dce.final",
                                                      "receive_twins", "symm_placement", "collective_lowering", "schedule",
                                                      "memory_plan", "exec_plan",    "hazard_check"};
  return steps;
}

bool hazard_check_default() {
#ifdef NDEBUG
  return params::flag("SYMMFLOW_VERIFY");
#else
  return true;
#endif
}

std::unique_ptr<Pass> make_pass(std::string_view name, const PipelineOptions& opts) {
  // Every pass the pipeline can make by name; the name is the pass's own name().
  std::vector<std::unique_ptr<Pass>> all;
  all.push_back(std::make_unique<RaceCheck>());
  all.push_back(std::make_unique<Functionalize>());
  all.push_back(std::make_unique<DeadCodeElimination>());
  all.push_back(std::make_unique<CommonSubexpressionElimination>());
  all.push_back(std::make_unique<Reinplace>());
  all.push_back(std::make_unique<FuseRows>());
  all.push_back(std::make_unique<FusePointwise>());
  all.push_back(std::make_unique<ReceiveTwins>());
  all.push_back(std::make_unique<SymmPlacement>(opts.placement));
  all.push_back(std::make_unique<CollectiveLowering>());
  all.push_back(std::make_unique<Schedule>(opts.schedule));
  all.push_back(std::make_unique<MemoryPlanning>(opts.sentinels));
  all.push_back(std::make_unique<BuildExecPlan>());
  std::vector<std::string_view> names;
  for (auto& p : all) {
    if (p->name() == name) return std::move(p);
    names.push_back(p->name());
  }
  throw Error(fmt::format("unknown pass '{}' (the passes: {}; hazard_check needs the program order and is made "
                          "by optimize)",
                          name, fmt::join(names, ", ")));
}

void optimize(ir::Graph& g, const PipelineOptions& opts) {
  const auto& steps = pipeline_steps();
  SF_CHECK(opts.stop_after.empty() || std::find(steps.begin(), steps.end(), opts.stop_after) != steps.end(),
           "unknown pipeline step '{}' (the steps: {})", opts.stop_after, fmt::join(steps, ", "));
  bool stopped = false;
  // A step is named by its pass (a pass run a second time adds a suffix).
  auto step = [&](Pass* pass, std::string_view suffix = "") {
    if (stopped) return;
    const std::string name = std::string(pass ? pass->name() : "input") + std::string(suffix);
    stopped = name == opts.stop_after;
    if (pass) pass->run(g);
    if (opts.verify_each || !pass) ir::verify(g, name);
    if (opts.dump) opts.dump(name, g);
  };
  auto race_check = make_pass("race_check", opts), functionalize = make_pass("functionalize", opts),
       dce = make_pass("dce", opts), cse = make_pass("cse", opts), reinplace = make_pass("reinplace", opts),
       fuse_rows = make_pass("fuse_rows", opts), fuse = make_pass("fuse_pointwise", opts),
       twins = make_pass("receive_twins", opts),
       placement = make_pass("symm_placement", opts), lowering = make_pass("collective_lowering", opts),
       schedule = make_pass("schedule", opts), memory_plan = make_pass("memory_plan", opts),
       exec_plan = make_pass("exec_plan", opts);
  step(nullptr);
  // Racy in eager (a receive buffer read before its wait...): the program's
  // fault, named on the source as written.
  step(race_check.get());
  step(functionalize.get());
  step(dce.get());
  step(cse.get());
  // Elementwise chains become one loop each while the program is still
  // functional: reinplace would turn them into in-place ops (gelu -> gelu_),
  // which write, and a write ends a chain. Row-wise chains (RMSNorm, softmax)
  // first, so the elementwise parts of a row group stay in it.
  step(fuse_rows.get());
  step(fuse.get());
  step(reinplace.get());
  step(dce.get(), ".final");
  // A graph input P2P receives into only in part keeps its other bytes where the
  // caller has them; its received rows get a symmetric twin (placement's job,
  // so not when placement is off).
  if (opts.placement.enabled) step(twins.get());
  // Placement decides on the final buffers: after reinplace, an op that runs in
  // place on its input needs that input's buffer symmetric.
  step(placement.get());
  step(lowering.get());
  // Comm starts early, waits late; the plan follows the final order.
  const std::vector<const ir::Node*> program_order(g.nodes().begin(), g.nodes().end());
  step(schedule.get());
  step(memory_plan.get());
  step(exec_plan.get());
  // A pipeline stopped early still runs: its symmetric arguments are placed, its
  // buffers planned, and the executable plan built (the executor derives nothing).
  if (stopped && !g.exec_plan()) {
    if (!g.plan().planned) {
      placement->run(g);
      memory_plan->run(g);
    }
    exec_plan->run(g);
  }
  // The executable plan over the final order and memory plan, checked by a
  // simulation that shares no code with the scheduler (tests, debug builds,
  // --verify).
  if (opts.check_hazards) {
    HazardCheck hazards(program_order);
    step(&hazards);
  }
}

}  // namespace symmflow::passes
