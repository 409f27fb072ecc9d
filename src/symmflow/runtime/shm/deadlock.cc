#include "symmflow/runtime/shm/deadlock.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "symmflow/core/error.h"
#include "symmflow/runtime/shm/control_block.h"

namespace symmflow::runtime {

std::string DeadlockDetector::still_blocked(const std::vector<int>& world_ranks, bool first,
                                            uint64_t epoch, FnRef<std::string()> describe) {
  WaitBoardSlot& s = cb_->waits[rank_];
  if (first) {
    uint64_t bits[2] = {0, 0};
    for (int r : world_ranks) bits[r / 64] |= uint64_t(1) << (r % 64);
    const uint64_t gen = s.gen.load(std::memory_order_relaxed) + 1;  // odd: blocked
    s.depends[0].store(bits[0], std::memory_order_relaxed);
    s.depends[1].store(bits[1], std::memory_order_relaxed);
    const std::string text = describe();
    const size_t n = std::min(text.size(), kWaitTextBytes - 1);
    std::memcpy(s.text, text.data(), n);
    s.text[n] = '\0';
    s.text_gen.store(gen, std::memory_order_relaxed);
    s.epoch.store(epoch, std::memory_order_relaxed);
    s.gen.store(gen, std::memory_order_release);
    published_ = true;
    last_.clear();
  } else {
    s.epoch.store(epoch, std::memory_order_release);
  }
  return look();
}

void DeadlockDetector::withdraw() {
  if (!published_) return;
  published_ = false;
  WaitBoardSlot& s = cb_->waits[rank_];
  s.gen.store(s.gen.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

std::string DeadlockDetector::look() {
  if (!published_) return "";
  // The blocked set: my wait, the ranks it depends on, theirs, ... Any rank
  // in it not blocked (or gone: the liveness checks report that) ends the look.
  std::vector<int> set{rank_};
  std::vector<bool> in(size_t(cb_->world_size), false);
  in[size_t(rank_)] = true;
  std::vector<uint64_t> snapshot;
  for (size_t i = 0; i < set.size(); ++i) {
    const int r = set[i];
    const WaitBoardSlot& s = cb_->waits[r];
    const uint64_t gen = s.gen.load(std::memory_order_acquire);
    if (gen % 2 == 0 || s.text_gen.load(std::memory_order_acquire) != gen ||
        RankState(cb_->state[r].load(std::memory_order_acquire)) != RankState::attached) {
      last_.clear();
      return "";
    }
    snapshot.insert(snapshot.end(), {uint64_t(r), gen, s.epoch.load(std::memory_order_acquire)});
    for (int w = 0; w < 2; ++w) {
      for (uint64_t bits = s.depends[w].load(std::memory_order_relaxed); bits; bits &= bits - 1) {
        const int p = w * 64 + __builtin_ctzll(bits);
        if (p < cb_->world_size && !in[size_t(p)]) {
          in[size_t(p)] = true;
          set.push_back(p);
        }
      }
    }
  }
  const auto now = std::chrono::steady_clock::now();
  if (snapshot != last_) {  // something moved since the last look: start over
    last_ = std::move(snapshot);
    since_ = now;
    return "";
  }
  if (now - since_ < kDeadlockGrace) return "";
  std::sort(set.begin(), set.end());
  std::string report =
      set.size() == 1
          ? fmt::format("{}rank {} is blocked in a wait that nothing can complete (no progress "
                        "for {} ms):", kDeadlockPrefix, set[0], kDeadlockGrace.count())
          : fmt::format("{}{} ranks are each blocked in a wait that none of them can complete "
                        "(no progress for {} ms):", kDeadlockPrefix, set.size(),
                        kDeadlockGrace.count());
  for (int r : set) report += fmt::format(" rank {}: {};", r, cb_->waits[r].text);
  report.back() = '.';
  return report;
}

void throw_if_deadlock(std::string_view problem) {
  constexpr std::string_view kAborted = "job aborted: ";
  if (problem.substr(0, kAborted.size()) != kAborted) return;
  problem.remove_prefix(kAborted.size());
  if (problem.substr(0, kDeadlockPrefix.size()) == kDeadlockPrefix)
    throw DeadlockError(std::string(problem));
}

}  // namespace symmflow::runtime
