// GroupSegment: the shared-memory segment of a process group on one node,
// mapped by the group's members on that node (all members, for a group inside
// one node). W below is that number of node-local members, and ranks here are
// their node-local indices (0..W-1, in group order). Layout (all offsets fixed
// by W and the per-rank heap capacity, so members only need the segment's name):
//
//   [header][signal pad: W x W x kChannels u64 + W wake words]
//   [heap check: W rings of records + a wake word]
//   [pair region: W x W blocks, opaque here][heap: W x capacity]
//
// The pair region is reserved for whoever drives point-to-point transfers
// (p2p/channel.h's control ring + mailbox): this layer knows only each block's
// size and alignment, so shm/ does not depend on p2p/.
//
// Rank r's heap is [heap + r*capacity, heap + (r+1)*capacity), so the peer copy
// of a symmetric allocation at offset o is heap + peer*capacity + o.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "symmflow/runtime/backend.h"
#include "symmflow/runtime/shm/segment.h"
#include "symmflow/runtime/shm/wait.h"

namespace symmflow::runtime {

inline constexpr int kChannels = 64;
inline constexpr int kCheckRing = 1024;

struct HeapRecord {
  std::atomic<uint64_t> seq;  // published last (release); 0 = empty
  uint64_t kind;              // 1 = allocate, 2 = free
  uint64_t size;
  uint64_t offset;
};

struct alignas(64) HeapCheckRing {
  std::atomic<uint64_t> published;  // highest seq written
  alignas(64) HeapRecord rec[kCheckRing];
};

struct GroupHeader {
  uint64_t magic;
  int32_t size;
  int32_t pad_;
  uint64_t capacity;
  char name[64];
};

// The size and alignment of one directed pair's block in the pair region.
struct PairRegion {
  size_t block_bytes = 0;
  size_t align = 64;
};

class GroupSegment {
 public:
  // Collective over every world rank of `backend` (members and non-members):
  // on each node, the first member there creates the segment, the name goes
  // through the bootstrap, that node's members map it, and once all have, the
  // creator unlinks the name. Returns nullptr on non-members.
  static std::shared_ptr<GroupSegment> create(dist::Backend& backend, const std::string& name,
                                              const std::vector<int>& world_ranks,
                                              size_t capacity, PairRegion pairs);

  int size() const { return size_; }
  size_t capacity() const { return capacity_; }
  const std::string& name() const { return name_; }

  // Signal slot written by `sender`, read by `receiver`.
  std::atomic<uint64_t>* slot(int receiver, int sender, int channel) const {
    return slots_ + (size_t(receiver) * size_ + sender) * kChannels + channel;
  }
  WakeWord& wake(int receiver) const { return wakes_[receiver]; }
  HeapCheckRing& check_ring(int rank) const { return rings_[rank]; }
  WakeWord& check_wake() const { return *check_wake_; }
  char* heap_base(int rank) const { return heap_ + size_t(rank) * capacity_; }
  // The pair-region block of the directed pair sender -> receiver (self
  // included): PairRegion::block_bytes, zero-filled at creation.
  void* pair_block(int sender, int receiver) const {
    return pairs_ + (size_t(sender) * size_ + receiver) * pair_stride_;
  }

 private:
  ShmSegment seg_;
  std::string name_;
  int size_ = 0;
  size_t capacity_ = 0;
  std::atomic<uint64_t>* slots_ = nullptr;
  WakeWord* wakes_ = nullptr;
  HeapCheckRing* rings_ = nullptr;
  WakeWord* check_wake_ = nullptr;
  char* pairs_ = nullptr;
  size_t pair_stride_ = 0;
  char* heap_ = nullptr;

  void bind(int size, size_t capacity, PairRegion pairs);
};

}  // namespace symmflow::runtime
