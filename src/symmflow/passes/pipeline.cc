#include "symmflow/passes/pipeline.h"

#include "symmflow/ir/verifier.h"
#include "symmflow/passes/cse.h"
#include "symmflow/passes/dce.h"
#include "symmflow/passes/functionalize.h"
#include "symmflow/passes/reinplace.h"

namespace symmflow::passes {

const std::vector<std::string_view>& pipeline_steps() {
  static const std::vector<std::string_view> steps = {"input", "functionalize", "dce", "cse", "reinplace", "dce.final"};
  return steps;
}

void optimize(ir::Graph& g, const PipelineOptions& opts) {
  auto step = [&](std::string_view name, Pass* pass) {
    if (pass) pass->run(g);
    if (opts.verify_each || !pass) ir::verify(g, name);
    if (opts.dump) opts.dump(name, g);
  };
  Functionalize functionalize;
  DeadCodeElimination dce;
  CommonSubexpressionElimination cse;
  Reinplace reinplace;
  step("input", nullptr);
  step("functionalize", &functionalize);
  step("dce", &dce);
  step("cse", &cse);
  step("reinplace", &reinplace);
  step("dce.final", &dce);
}

}  // namespace symmflow::passes
