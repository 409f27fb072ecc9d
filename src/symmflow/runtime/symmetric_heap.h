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
// Groups that span nodes: the heap lives in the node's shared segment; peers on
// other nodes have a copy at the same offset, but it is not addressable here:
// peer_base()/peer_ptr() return nullptr for them (like nvshmem_ptr).
//
// Checked mode (SYMMFLOW_CHECK_HEAP=1, or set_checked(true)): every rank logs
// each allocation and free (sequence number, kind, size, offset) in shared
// memory; at each allocation, every rank other than 0 compares its log with
// rank 0's (the node's first member, for groups that span nodes) and throws an
// Error naming both requests at the first difference.
#pragma once
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "symmflow/core/storage.h"

namespace symmflow::runtime {
class GroupSegment;   // shm/group_segment.h
class LivenessCheck;  // shm/wait.h
}  // namespace symmflow::runtime

namespace symmflow::dist {

class SymmetricHeap {
 public:
  // `local_of[p]`: group rank p's index in `seg` (its node-local index), -1 when
  // p is on another node. `rank` is this process's group rank.
  SymmetricHeap(std::shared_ptr<runtime::GroupSegment> seg, int rank, std::vector<int> local_of,
                std::string group_name, runtime::LivenessCheck* liveness, bool checked);
  ~SymmetricHeap();
  // The same heap (same memory, same allocator) seen by the group of this
  // node's members, whose ranks are the node-local indices.
  std::unique_ptr<SymmetricHeap> node_view(std::string group_name) const;

  // Collective. The Storage's deleter frees the block (also collective: every
  // rank must drop its last reference at the same point of the sequence).
  std::shared_ptr<Storage> allocate(size_t nbytes);
  // The core Allocator view of this heap (for Tensor::empty_with, AllocatorGuard).
  Allocator& allocator();

  int rank() const;
  int size() const;
  size_t capacity() const;                    // bytes per rank
  char* local_base() const;                   // byte 0 of my heap
  char* peer_base(int peer) const;            // byte 0 of the peer's heap; null: another node
  void* peer_ptr(int peer, size_t offset) const {
    char* b = peer_base(peer);
    return b ? b + offset : nullptr;
  }

  size_t bytes_in_use() const;   // sum of live allocations (rounded sizes)
  size_t live_allocations() const;
  size_t high_water() const;     // highest end offset ever used
  uint64_t operations() const;   // allocations + frees so far (the check sequence)

  bool checked() const;
  void set_checked(bool on);  // collective in spirit: every rank must agree

  struct State;  // shared with the storages, so the mapping outlives the group
  struct View;   // a group's name, rank and rank map over the State

 private:
  SymmetricHeap() = default;
  std::shared_ptr<State> state_;
  std::shared_ptr<const View> view_;
  std::unique_ptr<Allocator> allocator_;
};

}  // namespace symmflow::dist
