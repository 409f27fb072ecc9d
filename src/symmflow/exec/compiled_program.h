// CompiledProgram: an optimized graph ready to run again and again. Its
// instruction list is the graph's nodes in order, with each node's arguments
// and symmetric-memory needs resolved once. Intermediate buffers are allocated
// by the first run and replayed by every later one (ReplayAllocator): same
// addresses, no allocation; only the returned tensors are new on every run, so
// a caller may keep them. run() checks guards first — each input's dtype, sizes,
// strides and storage offset must be those the program was compiled for.
//
//   passes::optimize(*g);
//   CompiledProgram prog(std::move(g));
//   auto outs = prog.run(inputs);
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "symmflow/exec/replay_allocator.h"
#include "symmflow/ir/graph.h"

namespace symmflow::exec {

struct ProgramStats {
  int64_t runs = 0;
  int64_t copies = 0;        // copies the compiler inserted (aten::clone noted "copy:"), per run
  int64_t copy_bytes = 0;
  size_t buffers = 0;        // regular buffers held across runs
  size_t buffer_bytes = 0;
  size_t symmetric_bytes = 0;
};

class CompiledProgram {
 public:
  explicit CompiledProgram(std::unique_ptr<ir::Graph> g);
  ~CompiledProgram();

  // Fresh output tensors (or the inputs/views of them the program returns).
  std::vector<Tensor> run(std::span<const IValue> inputs);
  const ir::Graph& graph() const { return *g_; }
  ProgramStats stats() const;
  // Checks that these inputs fit the program; an Error naming the input otherwise.
  void check_guards(std::span<const IValue> inputs) const;

 private:
  std::unique_ptr<ir::Graph> g_;
  std::vector<bool> symmetric_node_;
  std::vector<IValue> env_;
  ReplayAllocator regular_;
  std::unique_ptr<ReplayAllocator> symmetric_;  // over the world's heap, made on first use
  int64_t runs_ = 0;
  int64_t copies_ = 0, copy_bytes_ = 0;
};

}  // namespace symmflow::exec
