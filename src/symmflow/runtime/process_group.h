// ProcessGroup: a set of ranks that run collectives together. It owns the
// group's shared segment (symmetric heap + signal pad) and knows its Backend.
//
//   auto& g = dist::world();
//   auto buf = symm::empty({1024}, DType::f32, g);        // collective
//   g.signals().put_with_signal(buf.storage()->peer_ptr(p), src, n, p, ch);
//   g.barrier();
//
// Ranks inside a group are group ranks 0..size()-1; world_rank() maps them.
#pragma once
#include <memory>
#include <typeindex>
#include <unordered_map>
#include <string>
#include <string_view>
#include <vector>

#include "symmflow/runtime/backend.h"
#include "symmflow/runtime/group_segment.h"
#include "symmflow/runtime/signal_pad.h"
#include "symmflow/runtime/symmetric_heap.h"

namespace symmflow::dist {

class ProcessGroup : private runtime::LivenessCheck {
 public:
  // Collective over every world rank (members or not), in the same order on all.
  // Returns nullptr on ranks that are not in `world_ranks`.
  static std::unique_ptr<ProcessGroup> create(Backend& backend, std::string name,
                                              std::vector<int> world_ranks, size_t heap_capacity,
                                              bool check_heap);
  ~ProcessGroup() override;

  const std::string& name() const { return name_; }
  int rank() const { return rank_; }
  int size() const { return int(world_ranks_.size()); }
  int world_rank(int group_rank) const { return world_ranks_.at(size_t(group_rank)); }
  const std::vector<int>& world_ranks() const { return world_ranks_; }

  SymmetricHeap& heap() { return *heap_; }
  SignalPad& signals() { return *signals_; }
  Backend* backend() const { return backend_; }
  // True when the peer's memory is load/store reachable (peer_ptr non-null).
  bool is_shm_reachable(int group_rank) const {
    return backend_->is_shm_reachable(world_rank(group_rank));
  }

  // A barrier of this group over its signal pad (microseconds, not a syscall).
  void barrier(std::string_view what = "");

  // Per-group state of a layer built on top (collectives' workspace, P2P
  // channels): created on first use with T(*this), destroyed with the group.
  // Not thread-safe: one thread drives a group.
  template <class T>
  T& extension() {
    auto& slot = extensions_[std::type_index(typeid(T))];
    if (!slot) slot = std::make_shared<T>(*this);
    return *std::static_pointer_cast<T>(slot);
  }

  // Throws PeerFailure if the job was aborted or a member is dead (-1: any).
  void check_peers(int group_rank, std::string_view context);

  // For layers that wait on their own shared state (P2P): the group's segment
  // and the liveness check that wait_slow() takes (abort flag, dead peers).
  runtime::GroupSegment& segment() { return *seg_; }
  runtime::LivenessCheck* liveness() { return this; }

 private:
  ProcessGroup() = default;
  void check(const runtime::WaitSite& site) override;

  Backend* backend_ = nullptr;
  std::string name_;
  int rank_ = -1;
  std::vector<int> world_ranks_;
  std::shared_ptr<runtime::GroupSegment> seg_;
  std::unique_ptr<SymmetricHeap> heap_;
  std::unique_ptr<SignalPad> signals_;
  // Declared last: extensions may hold heap storage, so they go before the heap.
  std::unordered_map<std::type_index, std::shared_ptr<void>> extensions_;
};

}  // namespace symmflow::dist
