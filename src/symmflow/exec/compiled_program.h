// CompiledProgram: an optimized graph ready to run again and again. It runs the
// graph's executable plan (ir/exec_plan.h: the instructions with their planned
// buffers, algorithm, start/wait pairs and symmetric-memory needs, built once by
// the pipeline's last step) and derives nothing itself:
// - the memory plan's arenas are allocated at load (the symmetric one is one
//   collective allocation, checked across ranks first) and every run reuses
//   them: same addresses, no allocation for planned buffers;
// - graph inputs that placement wants symmetric are copied into their
//   symmetric buffer unless the caller's tensor already is symmetric (and copied
//   back when the program writes them); a caller's symmetric tensors must sit
//   at the same offset on every rank, which the ranks compare once per
//   signature (exec/symmetric_inputs.h);
// - only the returned tensors (and kernels' own temporaries) are allocated per
//   run, so a caller may keep what a run returned.
// run() checks guards first: each input's dtype, sizes, strides and storage
// offset must be those the program was compiled for.
// Communication is asynchronous (passes/comm_ops.h): a collective a
// c10d::wait_tensor waits for is started at its node and completed at the wait;
// between instructions, while anything is in flight, the executor makes one
// pass of progress on the groups concerned, so transfers move during compute
// without a progress thread (docs/compiler.md says why).
//
//   passes::optimize(*g);                 // builds the executable plan
//   CompiledProgram prog(std::move(g));   // collective when the plan has symmetric buffers
//   auto outs = prog.run(inputs);
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "symmflow/exec/arenas.h"
#include "symmflow/exec/copy_report.h"
#include "symmflow/exec/timeline.h"
#include "symmflow/exec/replay_allocator.h"
#include "symmflow/exec/symmetric_inputs.h"
#include "symmflow/ir/exec_plan.h"
#include "symmflow/ir/graph.h"
#include "symmflow/runtime/collectives/collectives.h"

namespace symmflow::exec {

struct ProgramStats {
  int64_t runs = 0;
  // The last run's copies (exec/copy_report.h; before any run: inputs passed
  // regular, staged copies not yet measured).
  CopyReport copies;
  // What the executor itself copied in the last run (inputs in and back,
  // outputs out): always copies' inputs_to_symmetric + outputs_from_symmetric
  // (tests hold the report to it).
  int64_t executor_copies = 0, executor_copy_bytes = 0;
  size_t buffers = 0;  // planned buffers
  int64_t regular_bytes = 0;    // regular arena
  int64_t symmetric_bytes = 0;  // symmetric arena + symmetric scopes of custom ops
  int64_t misplaced = 0;        // planned results a kernel put elsewhere (last run)
  // Buffers the last run had to allocate: after the first run, only its
  // returned results (kernel temporaries and scoped symmetric buffers replay).
  int64_t allocations = 0;
  int64_t temporary_bytes = 0;  // kernel temporaries, kept between runs
  // How often the ranks compared where the caller's symmetric inputs sit
  // (exec/symmetric_inputs.h): once per signature, not per run.
  int64_t input_offset_checks = 0;
};

class CompiledProgram {
 public:
  explicit CompiledProgram(std::unique_ptr<ir::Graph> g);
  ~CompiledProgram();

  std::vector<Tensor> run(std::span<const IValue> inputs);
  const ir::Graph& graph() const { return *g_; }
  ProgramStats stats() const;
  // Checks that these inputs fit the program; an Error naming the input otherwise.
  void check_guards(std::span<const IValue> inputs) const;
  // The planned buffer of a value (tests check that addresses never change).
  const void* buffer_address(const ir::Value* v) const;
  // Records every later run into `t` (cleared at the start of each run); nullptr stops.
  void set_timeline(Timeline* t) { timeline_ = t; }

 private:
  struct RunState;  // one run's copy-backs, step start times and staged copies
  // run()'s phases: bind the inputs (copying in where the plan needs a
  // symmetric buffer the caller's tensor is not), run one instruction, copy
  // inputs back and collect the outputs, charge the runtime's staged copies to
  // the ops that caused them.
  void bind_inputs(std::span<const IValue> inputs, RunState& r);
  void run_step(size_t i, RunState& r);
  std::vector<Tensor> collect_outputs(RunState& r);
  void attribute_staged(const RunState& r);
  bool arena_backed(const Tensor& t) const;
  void progress_in_flight();
  size_t base_allocations() const;  // temps_ and scoped_ together
  std::unique_ptr<ir::Graph> g_;
  const ir::ExecPlan& plan_;             // g_'s executable plan: what run() executes
  std::vector<dist::ProcessGroup*> pg_;  // per instruction: its group, found at the first run
  int64_t staging_owners_ = 0;           // instruction i's staged copies are owner staging_owners_ + i
  std::unique_ptr<ProgramArenas> arenas_;
  std::unique_ptr<SymmetricInputCheck> symmetric_inputs_;
  std::vector<bool> caller_symmetric_;  // the last run's inputs: which were symmetric
  CopyReport copies_;                   // the last run's (copy_report for caller_symmetric_)
  std::vector<IValue> env_;
  std::unique_ptr<ReplayAllocator> scoped_;  // symmetric allocations of custom ops, replayed
  // Kernel temporaries and unplanned (returned) results, replayed: after the
  // first run, a run allocates only what it returns to the caller.
  std::unique_ptr<ReplayAllocator> temps_;
  int64_t runs_ = 0;
  ProgramStats last_;
  std::vector<int> in_flight_;  // asynchronous starts not yet waited for, oldest first
  std::vector<int> open_;       // per start: its waits still to come
  Timeline* timeline_ = nullptr;
};

}  // namespace symmflow::exec
