#include "symmflow/runtime/shm/control_block.h"

#include <signal.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace symmflow::runtime {

bool abort_job(ControlBlock* cb, int rank, const std::string& reason) {
  uint32_t expected = 0;
  if (!cb->abort_state.compare_exchange_strong(expected, 1)) return false;
  cb->abort_rank = rank;
  std::strncpy(cb->abort_reason, reason.c_str(), sizeof(cb->abort_reason) - 1);
  cb->abort_reason[sizeof(cb->abort_reason) - 1] = '\0';
  cb->abort_state.store(2, std::memory_order_release);
  notify_slow(cb->barrier_wake);  // bootstrap sleepers re-check at once
  return true;
}

bool job_aborted(const ControlBlock* cb) {
  return cb->abort_state.load(std::memory_order_acquire) == 2;
}

std::string abort_message(const ControlBlock* cb) {
  if (!job_aborted(cb)) return "";
  return std::string(cb->abort_reason);
}

std::string slot_problem(const ControlBlock* cb, int slot, int rank) {
  auto st = RankState(cb->state[slot].load(std::memory_order_acquire));
  pid_t pid = cb->pid[slot].load(std::memory_order_acquire);
  if (st == RankState::detached) return fmt::format("rank {} (pid {}) has already shut down", rank, pid);
  // kill(pid, 0) sees a zombie as alive; the launcher reaps promptly and
  // raises the abort flag, which covers that case.
  if (st == RankState::attached && pid > 0 && kill(pid, 0) != 0 && errno == ESRCH)
    return fmt::format("rank {} (pid {}) is dead", rank, pid);
  return "";
}

void record_failure(ControlBlock* cb, int rank, std::string_view message) {
  const size_t n = std::min(message.size(), kFailureBytes);
  std::memcpy(cb->failure[rank], message.data(), n);
  cb->failure_len[rank].store(uint32_t(n), std::memory_order_release);
}

std::string failure_summary(const ControlBlock* cb) {
  // Distinct messages in order of first appearance, each with its ranks.
  std::vector<std::pair<std::string_view, std::vector<int>>> groups;
  for (int r = 0; r < cb->world_size; ++r) {
    const uint32_t n = cb->failure_len[r].load(std::memory_order_acquire);
    if (n == 0) continue;
    std::string_view msg(cb->failure[r], n);
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == msg; });
    if (it == groups.end()) groups.push_back({msg, {r}});
    else it->second.push_back(r);
  }
  std::string out;
  for (const auto& [msg, ranks] : groups) {
    if (int(ranks.size()) == cb->world_size && ranks.size() > 1)
      out += fmt::format("all {} ranks: {}\n", ranks.size(), msg);
    else
      out += fmt::format("rank{} {}: {}\n", ranks.size() > 1 ? "s" : "", fmt::join(ranks, ", "), msg);
  }
  return out;
}

}  // namespace symmflow::runtime
