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
  // Compares the symmetric plan across ranks first (plan_check), then allocates.
  explicit ProgramArenas(const ir::Graph& g);
  // The Storage of a planned value (by id), or nullptr when it is not planned.
  std::shared_ptr<Storage> storage(int value_id) const;
  int64_t bytes(ir::Arena a) const;
  const void* base(ir::Arena a) const;
  // Sentinels: fill the guard bytes behind these values' buffers / check them.
  void arm_sentinels(const std::vector<int>& value_ids);
  void check_sentinels(const std::vector<int>& value_ids, const ir::Graph& g) const;

 private:
  std::shared_ptr<Storage> regular_, symmetric_;
  std::unordered_map<int, std::shared_ptr<Storage>> slots_;
  std::unordered_map<int, ir::BufferSlot> plan_;
};

// Hands a node's planned buffers to its kernel: each allocation of the planned
// size takes the next one, anything else (a kernel's temporary, an unplanned
// result) comes from `fallback`.
class PlannedAllocator : public Allocator {
 public:
  PlannedAllocator(std::deque<std::shared_ptr<Storage>> planned, Allocator& fallback)
      : planned_(std::move(planned)), fallback_(fallback) {}
  std::shared_ptr<Storage> allocate(size_t nbytes) override;

 private:
  std::deque<std::shared_ptr<Storage>> planned_;
  Allocator& fallback_;
};

// Before anything else collective, every rank checks that it planned the same
// symmetric buffers as rank 0 (ranks that traced different programs would
// otherwise corrupt each other's memory). A mismatch is an Error naming the
// first differing buffer. Needs dist::init(); no-op for one rank.
void check_plan_across_ranks(const ir::Graph& g);

}  // namespace symmflow::exec
