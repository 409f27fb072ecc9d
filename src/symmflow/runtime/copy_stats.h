// Counters of the bytes that staged paths copy: a tensor that is not in symmetric
// memory (or not contiguous) is copied into the symmetric heap before a
// collective or send and out of it after; every such copy is counted here so that
// callers (the compiler's reports, benchmarks, tests) can see and assert them.
//
// Owners: which op a copy is for. The compiled executor makes each op it runs
// the owner while it runs (ScopedStagingOwner, keyed by the instruction); an
// asynchronous op's work keeps the owner it was started under, and the runtime
// makes that the owner again whenever it progresses or completes the work. So a
// copy made while another op's wait drives the queue (a collective behind it in
// issue order, an eager message unpacked late) is still counted for the op
// that made it, not for the op whose wait happened to run it.
#pragma once
#include <cstdint>

namespace symmflow::dist {

struct CopyStats {
  uint64_t count = 0;  // number of copies (one per tensor copied in or out)
  uint64_t bytes = 0;  // bytes copied
};

// This process's totals since start (or the last reset). Thread-safe.
CopyStats staged_copy_stats();
void reset_staged_copy_stats();
// Called by the staged paths themselves: for the current owner, or for `owner`
// (a work's, kept from its start).
void count_staged_copy(uint64_t bytes);
void count_staged_copy_for(int64_t owner, uint64_t bytes);

inline constexpr int64_t kNoStagingOwner = -1;
// This thread's current owner (kNoStagingOwner outside the executor).
int64_t staging_owner();
class ScopedStagingOwner {
 public:
  explicit ScopedStagingOwner(int64_t owner);
  ~ScopedStagingOwner();
  ScopedStagingOwner(const ScopedStagingOwner&) = delete;
  ScopedStagingOwner& operator=(const ScopedStagingOwner&) = delete;

 private:
  int64_t previous_;
};
// A fresh range of `n` owners (for one compiled program's instructions), so
// that no two programs of a process share one.
int64_t new_staging_owners(int64_t n);
// The copies counted for `owner` since the last take, forgotten here.
CopyStats take_staged_copies(int64_t owner);

}  // namespace symmflow::dist
