// memory_plan: liveness-based offsets for every buffer the compiled program
// holds, in two arenas — regular and symmetric — over the final instruction
// order. The symmetric arena is allocated once per compiled program (one
// collective allocation at load, of the largest size any rank planned) and reused
// by every run. It has two regions (rule 7): the buffers collectives take come
// first, laid out alike on every rank that issues the same collectives, and each
// rank's P2P-only buffers follow — a receiver posts its own offset, so ranks that
// run different code (pipeline stages) may place those differently. The
// collective region is hashed; ranks compare the hashes at load (exec/arenas.h).
//
//   %a = aten::mul(%x, 2.0)     %a: regular +0    (64 B)
//   %b = aten::add(%a, 1.0)     %b: regular +64   (%a is still read below)
//   %c = aten::mul(%a, %b)      %c: regular +0?   no: %a dies here, after %c is made
//   %d = aten::neg(%c)          %d: regular +0    (%a and %b are dead: reused)
//
// Reuse rules, in order (a buffer is a fresh result and every view and in-place
// result of it, which share it):
// 1. A buffer lives from its producer to the last node that reads any value of it.
// 2. Not planned (the kernel allocates it on every run): regular buffers that
//    reach the graph's outputs (the caller keeps them), results of functional
//    nodes (they also allocate their copies), results of opaque custom ops run
//    under a symmetric scope, and empty tensors. A symmetric buffer that reaches
//    an output is planned all the same (symmetric memory is the program's, at a
//    fixed offset): the executor copies the returned tensor out of it.
// 3. At each node, buffers whose last read came before it are freed first; then
//    the node's new buffers take the lowest free offset that fits (first fit), so
//    a result never overlaps an input of the node that makes it.
// 4. Offsets are 64-byte aligned; with sentinels on, 64 guard bytes follow each
//    buffer (checked after every run).
// 5. Graph inputs that placement copies into symmetric memory get a symmetric
//    buffer live for the whole run (a written one is copied back at the end).
// 6. An asynchronous op (passes/comm_ops.h) reads and writes its buffers until
//    its wait: every buffer it takes stays live until then (an out-of-place
//    collective's input is read while the collective is in flight).
// 7. Symmetric buffers any collective or effect op takes (passes/comm_ops.h) are
//    packed first, into [0, collective_bytes); the other symmetric buffers (P2P
//    only) are packed after it. Each buffer of the first region is named by the
//    first collective that takes it and the operand, not by its value's name.
//
//   %b = aten::zeros([4, 8], f32)                      %b: symmetric +128 (P2P only: after the region)
//   %q = c10d::irecv_(%b, (rank-1+world)%world, 0, "world")
//   %g = aten::mul(%x, 2.0)                            %g: symmetric +0   (the collective region)
//   %r = c10d::all_reduce(%g, "sum", "world")
//   before rule 7, %b (born first) took +0 and %g +128; a rank that receives
//   nothing put %g at +0, and the all_reduce read another rank's +128.
#pragma once
#include "symmflow/passes/pass.h"

namespace symmflow::passes {

class MemoryPlanning : public Pass {
 public:
  explicit MemoryPlanning(bool sentinels = false) : sentinels_(sentinels) {}
  std::string_view name() const override { return "memory_plan"; }
  bool run(ir::Graph& g) override;

 private:
  bool sentinels_;
};

using ir::kBufferAlign;
using ir::kSentinelBytes;

}  // namespace symmflow::passes
