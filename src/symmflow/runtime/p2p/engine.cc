// P2PEngine (engine.h): construction, one progress pass, the wait loop and the
// activity counter it sleeps on. The wait loop is the one place where this
// process blocks for P2P: it snapshots activity(), progresses, and sleeps
// until the snapshot moves (or the deadline passes).
#include <algorithm>
#include <chrono>

#include "symmflow/core/error.h"
#include "symmflow/runtime/p2p/engine.h"

namespace symmflow::dist {

using Clock = std::chrono::steady_clock;

P2PEngine::P2PEngine(ProcessGroup& g)
    : group_(g), segment_(detail::GroupAccess::segment(g.node_group())), rank_(g.rank()),
      node_ranks_(g.node_ranks(g.node())), peers_(size_t(g.size())) {
  // The counters continue where an earlier engine of this group left them.
  for (int p : node_ranks_) {
    PeerState& peer = peers_[size_t(p)];
    peer.ring_head = pair(rank_, p).head.load(std::memory_order_relaxed);
    peer.ring_tail = pair(p, rank_).tail.load(std::memory_order_relaxed);
    peer.mailbox_chunks_drained = pair(p, rank_).drained.load(std::memory_order_relaxed);
    peer.mailbox_chunks_filled = pair(rank_, p).drained.load(std::memory_order_acquire);
  }
}

uint64_t P2PEngine::activity() const {
  uint64_t sum = 0;
  for (int p : node_ranks_) {
    sum += pair(p, rank_).head.load(std::memory_order_acquire);
    const runtime::P2PPairBlock& out = pair(rank_, p);
    sum += out.tail.load(std::memory_order_acquire) + out.drained.load(std::memory_order_acquire);
  }
  return sum;
}

void P2PEngine::progress() {
  for (int p : node_ranks_) consume(p);
  if (!net_pending_.empty()) poll_net();
  for (int p : node_ranks_) {
    flush(p);
    drive_staged(p);
  }
}

void P2PEngine::wait(P2PWork& w) {
  if (w.done) return;
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
      runtime::wait_slow([&] { return activity() != snapshot || Clock::now() >= deadline; },
                         wake(rank_), site, liveness, [&] { return describe(w); });
    } else {
      // Network requests move only when polled: no futex sleep.
      runtime::wait_poll(
          [&] { return activity() != snapshot || poll_net() || Clock::now() >= deadline; }, site,
          liveness, [&] { return describe(w); });
    }
  }
}

}  // namespace symmflow::dist
