#include "symmflow/runtime/process_group.h"

#include <algorithm>
#include <set>

#include "symmflow/core/error.h"

namespace symmflow::dist {

std::unique_ptr<ProcessGroup> ProcessGroup::create(Backend& backend, std::string name,
                                                   std::vector<int> world_ranks,
                                                   size_t heap_capacity, bool check_heap) {
  std::set<int> seen;
  for (int r : world_ranks) {
    SF_CHECK(r >= 0 && r < backend.size() && seen.insert(r).second,
             "group '{}': expected distinct world ranks in [0, {}), found {} in the list", name,
             backend.size(), r);
  }
  auto seg = runtime::GroupSegment::create(backend, name, world_ranks, heap_capacity);
  if (!seg) return nullptr;
  std::unique_ptr<ProcessGroup> g(new ProcessGroup());
  g->backend_ = &backend;
  g->name_ = std::move(name);
  g->world_ranks_ = std::move(world_ranks);
  g->rank_ = int(std::find(g->world_ranks_.begin(), g->world_ranks_.end(), backend.rank()) -
                 g->world_ranks_.begin());
  g->seg_ = seg;
  runtime::LivenessCheck* live = g.get();
  g->heap_ = std::make_unique<SymmetricHeap>(seg, g->rank_, g->name_, live, check_heap);
  g->signals_ = std::make_unique<SignalPad>(seg, g->rank_, g->name_, live);
  return g;
}

ProcessGroup::~ProcessGroup() = default;

void ProcessGroup::barrier(std::string_view what) { signals_->barrier(what); }

void ProcessGroup::check_peers(int group_rank, std::string_view context) {
  runtime::WaitSite site{"check_peers", context, name_, rank_, group_rank};
  check(site);
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
  std::string peer = site.peer >= 0 ? fmt::format("rank {}", site.peer) : "its peers";
  throw PeerFailure(fmt::format("peer failure in {}{}{}: group '{}', rank {} waiting for {}: {}",
                                site.op, site.what.empty() ? "" : " ", site.what, site.group,
                                site.rank, peer, problem));
}

}  // namespace symmflow::dist
