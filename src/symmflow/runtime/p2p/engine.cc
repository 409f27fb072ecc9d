// P2PEngine (engine.h): construction, one progress pass, the wait loop and the
// activity counter it sleeps on. The wait loop is the one place where this
// process blocks for P2P: it snapshots activity(), progresses, and sleeps
// until the snapshot moves (or the deadline passes).
#include <algorithm>
#include <chrono>
#include <mutex>

#include "symmflow/core/error.h"
#include "symmflow/runtime/p2p/engine.h"
#include "symmflow/runtime/progress.h"

namespace symmflow::dist {

using Clock = std::chrono::steady_clock;

std::atomic<uint64_t> P2PEngine::generation{0};

namespace {
// Every live engine with its id: looked up only when an engine was destroyed
// since a Work was made (rare), under the mutex (groups may be driven from
// different threads).
std::mutex g_engines_mutex;
std::vector<std::pair<const P2PEngine*, uint64_t>> g_engines;
uint64_t g_next_engine_id = 1;
}  // namespace

bool P2PEngine::alive(const P2PEngine* e, uint64_t id) {
  std::lock_guard<std::mutex> lock(g_engines_mutex);
  return std::find(g_engines.begin(), g_engines.end(), std::pair{e, id}) != g_engines.end();
}

P2PEngine::P2PEngine(ProcessGroup& g)
    : group_(g), segment_(detail::GroupAccess::segment(g.node_group())), rank_(g.rank()),
      node_ranks_(g.node_ranks(g.node())), peers_(size_t(g.size())) {
  {
    std::lock_guard<std::mutex> lock(g_engines_mutex);
    id_ = g_next_engine_id++;
    g_engines.emplace_back(this, id_);
  }
  my_wake_ = &segment_.wake(group_.local_index(rank_));
  my_heap_base_ = segment_.heap_base(group_.local_index(rank_));
  // The counters continue where an earlier engine of this group left them.
  for (int p : node_ranks_) {
    PeerState& peer = peers_[size_t(p)];
    peer.out = &pair(rank_, p);
    peer.in = &pair(p, rank_);
    peer.wake = &segment_.wake(group_.local_index(p));
    peer.ring_head = peer.out->head.load(std::memory_order_relaxed);
    peer.seen_tail = peer.out->tail.load(std::memory_order_acquire);
    peer.ring_tail = peer.in->tail.load(std::memory_order_relaxed);
    peer.mailbox_chunks_drained = peer.in->drained.load(std::memory_order_relaxed);
    peer.mailbox_chunks_filled = peer.out->drained.load(std::memory_order_acquire);
  }
}

P2PEngine::~P2PEngine() {
  std::lock_guard<std::mutex> lock(g_engines_mutex);
  std::erase(g_engines, std::pair<const P2PEngine*, uint64_t>{this, id_});
  generation.fetch_add(1, std::memory_order_relaxed);
}

uint64_t P2PEngine::activity() const {
  uint64_t sum = 0;
  for (int p : node_ranks_) {
    const PeerState& peer = peers_[size_t(p)];
    sum += peer.in->head.load(std::memory_order_acquire);
    sum += peer.out->tail.load(std::memory_order_acquire) +
           peer.out->drained.load(std::memory_order_acquire);
  }
  return sum;
}

void P2PEngine::pass() {
  for (int p : node_ranks_) consume(p);
  if (!net_pending_.empty()) poll_net();
  for (int p : node_ranks_) {
    PeerState& peer = peers_[size_t(p)];
    if (!peer.outbox.empty()) flush(p);
    if (!peer.staged_sends.empty()) drive_staged(p);
  }
}

void P2PEngine::progress() {
  pass();
  notify_peers();
}

void P2PEngine::wait(P2PWork& w) {
  if (w.done) return;
  // Fast path: a short poll, with nothing set up (clock, deadline, labels):
  // a small message from a peer that is running arrives within it. Ranks that
  // outnumber the CPUs poll little (the peer may need this CPU).
  {
    const int polls = runtime::oversubscribed() ? 4 : 512;
    for (int i = 0; i < polls; ++i) {
      progress();
      if (w.done) return;
      runtime::cpu_relax();
    }
  }
  const double timeout_s = runtime::wait_timeout_s();
  const auto start = Clock::now();
  const auto deadline =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  // "tag 3 sequence 2", for the wait site and messages (no allocation).
  char label[64];
  const auto n = fmt::format_to_n(label, sizeof label, "tag {} sequence {}", w.tag, w.tag_seq).size;
  const std::string_view what(label, std::min(n, sizeof label));
  runtime::WaitSite site{w.op(), what, group_.name(), rank_, w.peer};
  runtime::LivenessCheck* liveness = detail::GroupAccess::liveness(group_);
  auto next_liveness_check = start + std::chrono::milliseconds(50);
  for (;;) {
    // Snapshot before progressing: anything that arrives later changes it.
    const uint64_t snapshot = activity();
    progress();
    if (w.done) return;
    // The progress rule (progress.h): the group's collectives in flight take
    // every step they can while this rank waits for P2P.
    detail::coll_progress(group_);
    if (w.done) return;
    auto now = Clock::now();
    if (now >= next_liveness_check) {  // the peer may be dead while others keep us busy
      try {
        liveness->check(site);
      } catch (...) {
        progress();  // what the peer published before it died still counts
        if (w.done) return;
        runtime::note_comm_failure();
        throw;
      }
      next_liveness_check = now + std::chrono::milliseconds(50);
    }
    if (now >= deadline) {
      runtime::note_comm_failure();
      throw TimeoutError(timeout_message(w, timeout_s, what));
    }
    if (net_pending_.empty()) {
      runtime::wait_slow([&] {
                           return activity() != snapshot || detail::coll_ready(group_) ||
                                  Clock::now() >= deadline;
                         },
                         *my_wake_, site, liveness, [&] { return describe(w); });
    } else {
      // Network requests move only when polled: no futex sleep.
      runtime::wait_poll(
          [&] {
            return activity() != snapshot || poll_net() || detail::coll_ready(group_) ||
                   Clock::now() >= deadline;
          },
          site,
          liveness, [&] { return describe(w); });
    }
  }
}

}  // namespace symmflow::dist
