#include "symmflow/runtime/shm/signal_pad.h"

#include "symmflow/core/error.h"

namespace symmflow::dist {

SignalPad::SignalPad(std::shared_ptr<runtime::GroupSegment> seg, int rank, std::string group_name,
                     runtime::LivenessCheck* liveness)
    : seg_(std::move(seg)), rank_(rank), size_(seg_->size()), group_(std::move(group_name)),
      liveness_(liveness), consumed_(size_t(size_) * kChannels, 0) {}

void SignalPad::bad(int peer, int channel) const {
  fail("signal pad of group '{}' (rank {}): expected a peer in [0, {}) and a channel in [0, {}), "
       "found peer {} channel {}", group_, rank_, size_, kChannels, peer, channel);
}

void SignalPad::wait_signal_slow(int from, int channel, uint64_t expected, std::string_view what) {
  auto* slot = seg_->slot(rank_, from, channel);
  runtime::WaitSite site{"wait_signal", what, group_, rank_, from};
  runtime::wait_slow([&] { return slot->load(std::memory_order_acquire) >= expected; },
                     seg_->wake(rank_), site, liveness_, [&] {
                       return fmt::format("channel {}, expected sequence >= {}, saw {}", channel,
                                          expected, slot->load());
                     });
}

void SignalPad::wait_word(const std::atomic<uint64_t>& word, uint64_t expected, int from,
                          std::string_view what, std::string_view label,
                          runtime::FnRef<bool()> also) {
  if (word.load(std::memory_order_acquire) >= expected || also()) return;
  runtime::WaitSite site{"wait_signal", what, group_, rank_, from};
  runtime::wait_slow([&] { return word.load(std::memory_order_acquire) >= expected || also(); },
                     seg_->wake(rank_), site, liveness_, [&] {
                       return fmt::format("{}, expected sequence >= {}, saw {}", label, expected,
                                          word.load());
                     });
}

void SignalPad::barrier(std::string_view what) {
  ++barriers_;
  // Round k: signal rank+2^k, wait for rank-2^k. For a fixed receiver the
  // senders of different rounds are distinct, so each sender's count on channel
  // 0 is exactly the number of barriers it entered.
  for (int d = 1; d < size_; d <<= 1) {
    signal((rank_ + d) % size_, kBarrierChannel);
    int from = (rank_ - d + size_) % size_;
    auto* slot = seg_->slot(rank_, from, kBarrierChannel);
    if (slot->load(std::memory_order_acquire) >= barriers_) continue;
    runtime::WaitSite site{"barrier", what, group_, rank_, from};
    runtime::wait_slow([&] { return slot->load(std::memory_order_acquire) >= barriers_; },
                       seg_->wake(rank_), site, liveness_, [&] {
                         return fmt::format("barrier #{} (round distance {}), expected sequence "
                                            ">= {}, saw {}", barriers_, d, barriers_, slot->load());
                       });
  }
}

}  // namespace symmflow::dist
