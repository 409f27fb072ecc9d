// SignalPad: point-to-point signals between the ranks of a group, in shared
// memory. For every (sender, receiver, channel) there is one 64-bit sequence
// number that only the sender increments and only ever grows — nothing is ever
// reset, so a late or early signal can never be confused with another one.
//
//   // rank r sends `n` bytes into the peer's symmetric buffer, then signals:
//   pad.put_with_signal(buf.peer_ptr(peer), src, n, peer, ch);
//   // the peer waits for it (its k-th signal from r on ch), then reads buf:
//   pad.wait_signal(r, ch, k, "halo exchange");      // or pad.wait_next(r, ch, ...)
//
// Ordering: signal() is a release increment, wait_signal() an acquire load, so
// every store the sender made before signalling is visible to the receiver once
// its wait returns. A signal wakes a sleeping receiver (futex) only if it sleeps.
//
// Channels: 0 is the group barrier's; 1..kChannels-1 are free for collectives
// and P2P (give each concurrent protocol its own channel, or count carefully).
#pragma once
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include "symmflow/runtime/shm/group_segment.h"
#include "symmflow/runtime/shm/wait.h"

namespace symmflow::dist {

class SignalPad {
 public:
  static constexpr int kChannels = runtime::kChannels;
  static constexpr int kBarrierChannel = 0;
  static constexpr int kFirstFreeChannel = 1;

  SignalPad(std::shared_ptr<runtime::GroupSegment> seg, int rank, std::string group_name,
            runtime::LivenessCheck* liveness);

  int rank() const { return rank_; }
  int size() const { return size_; }

  // Increments my sequence number for (me -> peer, channel) with release order and
  // wakes the peer if it sleeps. Returns the new sequence number.
  uint64_t signal(int peer, int channel) {
    check(peer, channel);
    uint64_t v = seg_->slot(peer, rank_, channel)->fetch_add(1, std::memory_order_seq_cst) + 1;
    runtime::notify(seg_->wake(peer));
    return v;
  }
  // memcpy(dst, src, bytes) then signal(peer, channel). dst is normally a
  // peer_ptr() into the peer's symmetric heap.
  uint64_t put_with_signal(void* dst, const void* src, size_t bytes, int peer, int channel) {
    std::memcpy(dst, src, bytes);
    return signal(peer, channel);
  }

  // Blocks until `from`'s sequence number to me on `channel` is >= expected.
  // Throws TimeoutError (deadline: dist::set_timeout / SYMMFLOW_TIMEOUT) or
  // PeerFailure (job aborted, `from` dead). `what` names the caller's operation.
  void wait_signal(int from, int channel, uint64_t expected, std::string_view what) {
    check(from, channel);
    if (seg_->slot(rank_, from, channel)->load(std::memory_order_acquire) >= expected) return;
    wait_signal_slow(from, channel, expected, what);
  }
  // Waits for the next signal from `from` on `channel` (this rank counts the
  // signals it consumed per (from, channel)). Returns the sequence number.
  uint64_t wait_next(int from, int channel, std::string_view what) {
    check(from, channel);
    uint64_t want = ++consumed_[size_t(from) * kChannels + channel];
    wait_signal(from, channel, want, what);
    return want;
  }

  // The current value `from` has sent me on `channel` (acquire load).
  uint64_t received(int from, int channel) const {
    return seg_->slot(rank_, from, channel)->load(std::memory_order_acquire);
  }
  // The word `from` signals me on `channel` (for waits driven by a caller, e.g.
  // a collective's coroutine: collectives/coll_task.h).
  const std::atomic<uint64_t>& incoming(int from, int channel) const {
    check(from, channel);
    return *seg_->slot(rank_, from, channel);
  }
  // Wakes `peer` if it sleeps: after publishing, with release order, a word
  // other than a signal that the peer may wait for in wait_word().
  void wake(int peer) { runtime::notify(seg_->wake(peer)); }
  // Blocks until `word` (in this group's shared memory, written by `from`) is
  // >= expected or `also()` is true, with wait_signal's deadline, liveness
  // checks and messages; `label` names the word ("channel 4 (DONE)").
  void wait_word(const std::atomic<uint64_t>& word, uint64_t expected, int from,
                 std::string_view what, std::string_view label, runtime::FnRef<bool()> also);
  // How many signals I sent `to` on `channel`.
  uint64_t sent(int to, int channel) const {
    return seg_->slot(to, rank_, channel)->load(std::memory_order_relaxed);
  }
  // How many signals from `from` on `channel` wait_next() has consumed.
  uint64_t consumed(int from, int channel) const {
    return consumed_[size_t(from) * kChannels + channel];
  }

  // Dissemination barrier over channel 0: ceil(log2 W) rounds of signal + wait.
  void barrier(std::string_view what);

 private:
  void check(int peer, int channel) const {
    if (unsigned(peer) >= unsigned(size_) || unsigned(channel) >= unsigned(kChannels)) bad(peer, channel);
  }
  [[noreturn]] void bad(int peer, int channel) const;
  void wait_signal_slow(int from, int channel, uint64_t expected, std::string_view what);

  std::shared_ptr<runtime::GroupSegment> seg_;
  int rank_, size_;
  std::string group_;
  runtime::LivenessCheck* liveness_;
  std::vector<uint64_t> consumed_;
  uint64_t barriers_ = 0;
};

}  // namespace symmflow::dist
