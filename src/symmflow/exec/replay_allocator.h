// ReplayAllocator: the buffers of a compiled program, allocated once and handed
// out again in the same order on every run. A compiled program makes the same
// allocations in the same order every time (same ops, same shapes), so after
// its first run no run allocates: the k-th allocation of every run gets the k-th
// buffer, at the same address. Over the symmetric heap this is what makes the
// symmetric buffers persistent: same offset on every rank, every iteration.
//
//   ReplayAllocator bufs(regular_allocator());
//   { AllocatorGuard g(bufs); run(); }   // records
//   bufs.rewind();
//   { AllocatorGuard g(bufs); run(); }   // replays: no allocation
#pragma once
#include <memory>
#include <vector>

#include "symmflow/core/storage.h"

namespace symmflow::exec {

class ReplayAllocator : public Allocator {
 public:
  explicit ReplayAllocator(Allocator& base) : base_(base) {}
  std::shared_ptr<Storage> allocate(size_t nbytes) override;
  // The next run starts again from the first buffer.
  void rewind() { next_ = 0; }
  // The buffer backing `s` (if one of ours) is handed over: from now on its slot
  // in the sequence is allocated afresh on every run.
  void release(const Storage* s);
  size_t buffers() const { return blocks_.size(); }
  size_t bytes() const;
  // Allocations that had to go to the base allocator (0 once a run was recorded).
  size_t fresh_allocations() const { return fresh_; }
  // Every call that reached the base allocator: recordings and released slots.
  size_t base_allocations() const { return base_calls_; }
  const std::vector<std::shared_ptr<Storage>>& blocks() const { return blocks_; }

 private:
  Allocator& base_;
  std::vector<std::shared_ptr<Storage>> blocks_;  // null: allocated afresh each run
  std::vector<size_t> sizes_;
  size_t next_ = 0;
  size_t fresh_ = 0;
  size_t base_calls_ = 0;
};

}  // namespace symmflow::exec
