#include "symmflow/runtime/process_group.h"

#include <algorithm>
#include <set>

#include "symmflow/core/error.h"
#include "symmflow/runtime/p2p/channel.h"
#include "symmflow/runtime/process_group_internal.h"
#include "symmflow/runtime/shm/deadlock.h"

namespace symmflow::dist {

namespace {
// Tag of the barrier's messages between nodes (collectives' lane).
constexpr int kNetBarrierTag = 1;
}  // namespace

std::unique_ptr<ProcessGroup> ProcessGroup::create(Backend& backend, std::string name,
                                                   std::vector<int> world_ranks,
                                                   size_t heap_capacity, bool check_heap) {
  std::set<int> seen;
  for (int r : world_ranks) {
    SF_CHECK(r >= 0 && r < backend.size() && seen.insert(r).second,
             "group '{}': expected distinct world ranks in [0, {}), found {} in the list", name,
             backend.size(), r);
  }
  // Topology from the backend's nodes, renumbered in the order of each node's
  // lowest group rank (group order, not world order).
  const int W = int(world_ranks.size());
  std::vector<int> node_of(static_cast<size_t>(W)), local_of(static_cast<size_t>(W), -1);
  std::vector<std::vector<int>> nodes;
  std::vector<int> backend_node;  // our node k -> backend node
  for (int p = 0; p < W; ++p) {
    int bn = backend.node_of(world_ranks[size_t(p)]);
    auto it = std::find(backend_node.begin(), backend_node.end(), bn);
    if (it == backend_node.end()) {
      backend_node.push_back(bn);
      nodes.emplace_back();
      it = backend_node.end() - 1;
    }
    int k = int(it - backend_node.begin());
    node_of[size_t(p)] = k;
    nodes[size_t(k)].push_back(p);
  }
  auto me_it = std::find(world_ranks.begin(), world_ranks.end(), backend.rank());
  const bool member = me_it != world_ranks.end();
  const int me = member ? int(me_it - world_ranks.begin()) : -1;
  if (member) {
    const auto& mine = nodes[size_t(node_of[size_t(me)])];
    for (size_t i = 0; i < mine.size(); ++i) local_of[size_t(mine[i])] = int(i);
  }

  // Both are collective over every world rank, members or not.
  // The segment's pair region holds P2P's per-pair blocks (control ring + mailbox).
  auto seg = runtime::GroupSegment::create(
      backend, name, world_ranks, heap_capacity,
      {sizeof(runtime::P2PPairBlock), alignof(runtime::P2PPairBlock)});
  std::unique_ptr<NetLink> net;
  if (nodes.size() > 1) net = backend.connect(world_ranks, name);
  if (!seg) return nullptr;

  std::unique_ptr<ProcessGroup> g(new ProcessGroup());
  g->backend_ = &backend;
  g->name_ = std::move(name);
  g->world_ranks_ = std::move(world_ranks);
  g->rank_ = me;
  g->nodes_ = std::move(nodes);
  g->node_of_ = std::move(node_of);
  g->local_of_ = std::move(local_of);
  g->seg_ = seg;
  g->net_ = std::move(net);
  g->liveness_ = std::make_unique<Liveness>(*g);
  runtime::LivenessCheck* live = g->liveness_.get();
  g->heap_ = std::make_unique<SymmetricHeap>(seg, g->rank_, g->local_of_, g->name_, live, check_heap);
  if (!g->spans_nodes()) {
    g->signals_ = std::make_unique<SignalPad>(seg, g->rank_, g->name_, live);
    return g;
  }
  // The node view: this node's members, ranks = local indices, sharing the
  // segment and the heap's allocator (so the group's symmetric tensors are
  // symmetric tensors of the node group too, and its collectives are zero copy).
  const auto& mine = g->nodes_[size_t(g->node())];
  std::unique_ptr<ProcessGroup> n(new ProcessGroup());
  n->backend_ = &backend;
  n->name_ = fmt::format("{}@node{}", g->name_, g->node());
  for (int p : mine) n->world_ranks_.push_back(g->world_ranks_[size_t(p)]);
  n->rank_ = g->local_of_[size_t(me)];
  n->nodes_ = {std::vector<int>(mine.size())};
  for (size_t i = 0; i < mine.size(); ++i) n->nodes_[0][i] = int(i);
  n->node_of_.assign(mine.size(), 0);
  n->local_of_ = n->nodes_[0];
  n->seg_ = seg;
  n->heap_ = g->heap_->node_view(n->name_);
  n->liveness_ = std::make_unique<Liveness>(*n);
  runtime::LivenessCheck* nlive = n->liveness_.get();
  n->signals_ = std::make_unique<SignalPad>(seg, n->rank_, n->name_, nlive);
  g->node_ = std::move(n);
  return g;
}

ProcessGroup::~ProcessGroup() = default;

SignalPad& ProcessGroup::signals() {
  SF_CHECK(!spans_nodes(), "group '{}' spans {} nodes: its signal pad reaches only this node's "
           "ranks; use node_group().signals() with node-local ranks", name_, num_nodes());
  return *signals_;
}

void ProcessGroup::barrier(std::string_view what) {
  if (!spans_nodes()) return signals_->barrier(what);
  // Everyone on my node has arrived; the nodes' first ranks meet; then they
  // release their nodes.
  node_->signals_->barrier(what);
  if (rank_ == nodes_[size_t(node())][0]) net_barrier(what);
  node_->signals_->barrier(what);
}

void ProcessGroup::net_barrier(std::string_view what) {
  // Dissemination over the nodes' first ranks, empty messages: ceil(log2 N)
  // rounds. One tag is enough: every round of every barrier goes to a
  // different (peer, order) pair and MPI matches per pair in order.
  ++net_barriers_;
  const int N = num_nodes(), k = node();
  runtime::WaitSite site{"barrier", what, name_, rank_, -1};
  for (int d = 1; d < N; d <<= 1) {
    const int to = nodes_[size_t((k + d) % N)][0], from = nodes_[size_t((k - d + N) % N)][0];
    char none = 0;
    auto r = net_->irecv(&none, 0, from, kNetBarrierTag, NetLink::Lane::coll);
    auto s = net_->isend(&none, 0, to, kNetBarrierTag, NetLink::Lane::coll);
    site.peer = from;
    net_wait(*net_, r, site, liveness_.get());
    net_wait(*net_, s, site, liveness_.get());
  }
}

void ProcessGroup::check_peers(int group_rank, std::string_view context) {
  runtime::WaitSite site{"check_peers", context, name_, rank_, group_rank};
  try {
    check(site);
  } catch (...) {
    runtime::note_comm_failure();
    throw;
  }
}

void ProcessGroup::check(const runtime::WaitSite& site) {
  std::string problem;
  if (site.peer >= 0) {
    problem = backend_->peer_problem(world_rank(site.peer));
  } else {
    for (int p = 0; p < size() && problem.empty(); ++p)
      if (p != rank_) problem = backend_->peer_problem(world_rank(p));
  }
  if (problem.empty()) return;
  runtime::throw_if_deadlock(problem);  // every rank fails with the same report
  // Node groups ("world@node1") number their ranks per node: say which world rank.
  std::string peer = site.peer < 0 ? std::string("its peers")
                     : world_rank(site.peer) == site.peer
                         ? fmt::format("rank {}", site.peer)
                         : fmt::format("rank {} (world rank {})", site.peer, world_rank(site.peer));
  throw PeerFailure(fmt::format("peer failure in {}{}{}: group '{}', rank {} waiting for {}: {}",
                                site.op, site.what.empty() ? "" : " ", site.what, site.group,
                                site.rank, peer, problem));
}

void ProcessGroup::Liveness::still_blocked(const runtime::WaitSite& site, bool first,
                                          uint64_t epoch, runtime::FnRef<std::string()> describe) {
  runtime::DeadlockDetector* d = g.backend_->deadlock_detector();
  if (!d) return;
  // A wait of this group can be completed only by its members.
  std::string report = d->still_blocked(g.world_ranks_, first, epoch, describe);
  if (report.empty()) return;
  g.backend_->abort(report);  // the first reason wins; check() throws it
  g.check(site);
  throw DeadlockError(report);  // a group of one rank has no peer to check
}

void ProcessGroup::Liveness::unblocked() {
  if (runtime::DeadlockDetector* d = g.backend_->deadlock_detector()) d->withdraw();
}

}  // namespace symmflow::dist
