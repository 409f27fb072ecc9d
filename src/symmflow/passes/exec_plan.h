// exec_plan: the pipeline's last step. It reads the final order, the memory plan
// and collective_lowering's algorithms and writes the executable plan
// (ir/exec_plan.h) once: per node its instruction (kind, planned and fresh
// results, start/wait pairing, group, algorithm), per graph input whether it is
// placed symmetric and written, and every copy a run makes with its origin. The
// graph is unchanged (changed is always false); the executor, the hazard
// verifier and every report read what this step wrote.
//
//   %y = aten::mm(%x, %w)                  instruction 0  compute, %y planned (symmetric +0)
//   %r = c10d::all_reduce(%y, "sum", "world")  instruction 1  collective, starts async, waits [2], one_shot
//   %r.1 = c10d::wait_tensor(%r)           instruction 2  wait of 1
//   %z = aten::add(%r.1, %x)               instruction 3  compute, %z returned (not planned)
#pragma once
#include "symmflow/passes/pass.h"

namespace symmflow::passes {

class BuildExecPlan : public Pass {
 public:
  std::string_view name() const override { return "exec_plan"; }
  bool run(ir::Graph& g) override;
};

}  // namespace symmflow::passes
