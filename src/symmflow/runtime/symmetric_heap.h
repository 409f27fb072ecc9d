// SymmetricHeap: a group's collective allocator over its shared segment. Every
// rank makes the same sequence of allocations and frees and therefore gets the
// same offsets (deterministic first fit); the peer copy of an allocation at
// offset o is peer_base(peer) + o, directly loadable and storable.
//
//   auto st = heap.allocate(4096);                  // collective: same on all ranks
//   float* mine = (float*)st->data();
//   float* theirs = (float*)st->peer_ptr(peer);      // the peer's copy
//
// Alignment: 64 bytes, 4 KiB for allocations of 64 KiB and more. Freed blocks
// coalesce and are reused first-fit, so a later allocation of the same size
// gets the freed offset back.
//
// Checked mode (SYMMFLOW_CHECK_HEAP=1, or set_checked(true)): every rank logs
// each allocation and free (sequence number, kind, size, offset) in shared
// memory; at each allocation, every rank other than 0 compares its log with
// rank 0's and throws an Error naming both requests at the first difference.
#pragma once
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "symmflow/core/storage.h"
#include "symmflow/runtime/group_segment.h"
#include "symmflow/runtime/wait.h"

namespace symmflow::dist {

class SymmetricHeap {
 public:
  SymmetricHeap(std::shared_ptr<runtime::GroupSegment> seg, int rank, std::string group_name,
                runtime::LivenessCheck* liveness, bool checked);
  ~SymmetricHeap();

  // Collective. The Storage's deleter frees the block (also collective: every
  // rank must drop its last reference at the same point of the sequence).
  std::shared_ptr<Storage> allocate(size_t nbytes);
  // The core Allocator view of this heap (for Tensor::empty_with, AllocatorGuard).
  Allocator& allocator();

  int rank() const;
  int size() const;
  size_t capacity() const;                    // bytes per rank
  char* local_base() const;                   // byte 0 of my heap
  char* peer_base(int peer) const;            // byte 0 of the peer's heap
  void* peer_ptr(int peer, size_t offset) const { return peer_base(peer) + offset; }

  size_t bytes_in_use() const;   // sum of live allocations (rounded sizes)
  size_t live_allocations() const;
  size_t high_water() const;     // highest end offset ever used
  uint64_t operations() const;   // allocations + frees so far (the check sequence)

  bool checked() const;
  void set_checked(bool on);  // collective in spirit: every rank must agree

  struct State;  // shared with the storages, so the mapping outlives the group

 private:
  std::shared_ptr<State> state_;
  std::unique_ptr<Allocator> allocator_;
};

}  // namespace symmflow::dist
