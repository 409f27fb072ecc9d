// The memory of a compiled program, allocated once at load from its plan
// (passes/memory_plan.h): a regular arena, and a symmetric arena that is one
// collective allocation in the world's symmetric heap — same offset on every
// rank, and the same addresses on every run. Each planned buffer is a Storage
// over its slice (a symmetric slice knows its heap offset and its peers' copies).
//
//   ProgramArenas a(g.plan());            // collective when the plan has symmetric buffers
//   PlannedAllocator alloc(a.storages_of(node outputs), fallback);
//   { AllocatorGuard guard(alloc); run the node; }   // its outputs land in their slots
#pragma once
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "symmflow/core/storage.h"
#include "symmflow/ir/graph.h"

namespace symmflow::exec {

class ProgramArenas {
 public:
  // Compares the symmetric plans across ranks first (check_plan_across_ranks), then allocates.
  explicit ProgramArenas(const ir::Graph& g);
  // The Storage of a planned value (by id), or nullptr when it is not planned.
  std::shared_ptr<Storage> storage(int value_id) const;
  int64_t bytes(ir::Arena a) const;
  // Whether every rank's collective buffers are graph inputs in the same places.
  bool same_input_buffers() const { return same_input_buffers_; }
  const void* base(ir::Arena a) const;
  // Sentinels: fill the guard bytes behind these values' buffers / check them.
  void arm_sentinels(const std::vector<int>& value_ids);
  void check_sentinels(const std::vector<int>& value_ids, const ir::Graph& g) const;

 private:
  std::shared_ptr<Storage> regular_, symmetric_;
  bool same_input_buffers_ = true;
  std::unordered_map<int, std::shared_ptr<Storage>> slots_;
  std::unordered_map<int, ir::BufferSlot> plan_;
};

// Hands a node's planned buffers to its kernel: each allocation of the next
// result's size takes that result's entry, anything else (a kernel's temporary)
// comes from `fallback`. A result the plan leaves out (a returned one) has an
// entry without storage: its allocation comes from `fallback` too, and does not
// take the buffer of a later result of the same size (native_layer_norm returns
// its mean and drops its rstd, both [rows, 1]).
class PlannedAllocator : public Allocator {
 public:
  struct Result {
    std::shared_ptr<Storage> planned;  // null: not planned
    size_t nbytes = 0;
  };
  PlannedAllocator(std::deque<Result> results, Allocator& fallback)
      : results_(std::move(results)), fallback_(fallback) {}
  std::shared_ptr<Storage> allocate(size_t nbytes) override;

 private:
  std::deque<Result> results_;
  Allocator& fallback_;
};

// The collective region, one entry per buffer (plan().collective_buffers'
// order): what must agree between ranks ("collective #2 operand 0: 128 bytes at
// +64") and, for messages, this rank's value and op ("%h of c10d::all_reduce at
// prog.sf:7:3").
struct RegionEntry {
  std::string key, what;
};
std::vector<RegionEntry> collective_region(const ir::Graph& g);

// Before anything else collective, the ranks exchange their symmetric plans:
// every rank must have planned the same collective region as rank 0 (ranks that
// traced different collectives would otherwise corrupt each other's memory); a
// mismatch is an Error on every rank naming the first differing buffer on both
// ranks. The P2P-only region after it may differ. Returns the symmetric arena's
// size every rank allocates: the largest any rank planned (the heap is collective).
// Needs dist::init() for more than one rank.
// The collective buffers that are graph inputs: their plan().collective_buffers
// entry and the input, in entry order.
struct InputBuffer {
  size_t entry;
  const ir::Value* input;
};
std::vector<InputBuffer> input_collective_buffers(const ir::Graph& g);

// Also says whether every rank's collective region has graph inputs in the same
// places (ranks that run different code may not: then a caller's symmetric
// input is not compared across ranks, exec/symmetric_inputs.h).
struct PlanAgreement {
  int64_t symmetric_bytes = 0;
  bool same_input_buffers = true;
};
PlanAgreement check_plan_across_ranks(const ir::Graph& g);

}  // namespace symmflow::exec
