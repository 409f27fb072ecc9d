// ProcessGroup: a set of ranks that run collectives together. It owns the
// group's shared segment (symmetric heap + signal pad) and knows its Backend.
//
//   auto& g = dist::world();
//   auto buf = symm::empty({1024}, DType::f32, g);        // collective
//   g.barrier();
//
// Ranks inside a group are group ranks 0..size()-1; world_rank() maps them.
//
// Topology: a group may span nodes (mpi backend). Its members on this node
// share a segment (heap + signal pad); node_group() is that set of ranks as a
// group of its own (ranks = node-local indices, same heap). Collectives and P2P
// pick shared memory or the network per peer.
//
// This header is part of the public include (symmflow/symmflow.h), so it names
// no transport internals: the group segment, the network link, the liveness
// check and the per-layer extensions are reached only through
// detail::GroupAccess (runtime/process_group_internal.h), which runtime code
// includes. signals() is the documented low-level API of docs/runtime.md
// ("Signals"): it is declared here, but SignalPad is complete only with
// runtime/runtime.h (or runtime/shm/signal_pad.h), the runtime-level include.
#pragma once
#include <memory>
#include <typeindex>
#include <unordered_map>
#include <string>
#include <string_view>
#include <vector>

#include "symmflow/runtime/backend.h"
#include "symmflow/runtime/symmetric_heap.h"

namespace symmflow::runtime {
class GroupSegment;
class LivenessCheck;
struct WaitSite;
}  // namespace symmflow::runtime

namespace symmflow::dist {

class NetLink;
class SignalPad;
namespace detail {
struct GroupAccess;  // runtime/process_group_internal.h
}  // namespace detail

class ProcessGroup {
 public:
  // Collective over every world rank (members or not), in the same order on all.
  // Returns nullptr on ranks that are not in `world_ranks`.
  static std::unique_ptr<ProcessGroup> create(Backend& backend, std::string name,
                                              std::vector<int> world_ranks, size_t heap_capacity,
                                              bool check_heap);
  ~ProcessGroup();

  const std::string& name() const { return name_; }
  int rank() const { return rank_; }
  int size() const { return int(world_ranks_.size()); }
  int world_rank(int group_rank) const { return world_ranks_.at(size_t(group_rank)); }
  const std::vector<int>& world_ranks() const { return world_ranks_; }

  SymmetricHeap& heap() { return *heap_; }
  // The signal pad of a group inside one node (low-level API: include
  // runtime/runtime.h to use it). For a group that spans nodes it is an Error:
  // signals reach only this node (node_group().signals()).
  SignalPad& signals();
  Backend* backend() const { return backend_; }

  // --- topology ---
  // Nodes are numbered 0..num_nodes()-1 in the order of their lowest group rank.
  int num_nodes() const { return int(nodes_.size()); }
  bool spans_nodes() const { return nodes_.size() > 1; }
  int node() const { return node_of_[size_t(rank_)]; }
  int node_of(int group_rank) const { return node_of_.at(size_t(group_rank)); }
  const std::vector<int>& node_ranks(int node) const { return nodes_.at(size_t(node)); }
  // The peer's index among my node's members (in group order); -1 on another node.
  int local_index(int group_rank) const { return local_of_.at(size_t(group_rank)); }
  // True when the peer's memory is load/store reachable (peer_ptr non-null).
  bool is_shm_reachable(int group_rank) const { return local_index(group_rank) >= 0; }
  // My node's members as a group (rank = local index, same heap). *this when
  // the group does not span nodes.
  ProcessGroup& node_group() { return node_ ? *node_ : *this; }

  // A barrier of the whole group: over the signal pad inside a node
  // (microseconds, not a syscall), plus a message round between nodes.
  void barrier(std::string_view what = "");

  // Throws PeerFailure if the job was aborted or a member is dead (-1: any).
  void check_peers(int group_rank, std::string_view context);

 private:
  friend struct detail::GroupAccess;
  struct Liveness;  // the runtime::LivenessCheck of this group (process_group.cc)

  ProcessGroup() = default;
  void check(const runtime::WaitSite& site);
  void net_barrier(std::string_view what);

  Backend* backend_ = nullptr;
  std::string name_;
  int rank_ = -1;
  std::vector<int> world_ranks_;
  std::vector<std::vector<int>> nodes_;  // group ranks per node
  std::vector<int> node_of_, local_of_;  // per group rank
  std::unique_ptr<NetLink> net_;
  std::unique_ptr<ProcessGroup> node_;   // spanning groups only
  uint64_t net_barriers_ = 0;
  std::shared_ptr<runtime::GroupSegment> seg_;
  std::unique_ptr<Liveness> liveness_;   // before the heap and pad that point to it
  std::unique_ptr<SymmetricHeap> heap_;
  std::unique_ptr<SignalPad> signals_;
  // Declared last: extensions may hold heap storage, so they go before the heap.
  std::unordered_map<std::type_index, std::shared_ptr<void>> extensions_;
};

}  // namespace symmflow::dist
