#include "symmflow/runtime/shm/control_block.h"

#include <signal.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
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

namespace {

// A rank stopped by another's failure recorded a PeerFailure ending in the
// abort reason that rank raised: "<where it waited>: job aborted: rank K
// failed: <K's own message>" (messages may be cut at kFailureBytes). Returns
// K and what precedes the abort, or -1 when `msg` is not such a consequence
// of a rank whose own message is in `failed` (rank -> message, "" if none).
std::pair<int, std::string_view> consequence_of(std::string_view msg, const std::vector<std::string_view>& failed) {
  constexpr std::string_view kAborted = ": job aborted: rank ";
  constexpr std::string_view kFailed = " failed: ";
  const size_t at = msg.find(kAborted);
  if (at == std::string_view::npos) return {-1, {}};
  std::string_view rest = msg.substr(at + kAborted.size());
  int k = -1;
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), k);
  const size_t digits = size_t(end - rest.data());
  if (ec != std::errc() || k < 0 || k >= int(failed.size()) || rest.substr(digits, kFailed.size()) != kFailed)
    return {-1, {}};
  const std::string_view theirs = rest.substr(digits + kFailed.size());
  const std::string_view own = failed[size_t(k)];
  // Equal, or one a cut of the other (each side may have been truncated).
  const size_t n = std::min(theirs.size(), own.size());
  if (own.empty() || n == 0 || theirs.substr(0, n) != own.substr(0, n)) return {-1, {}};
  std::string_view where = msg.substr(0, at);
  constexpr std::string_view kPeerFailure = "peer failure in ";
  if (where.substr(0, kPeerFailure.size()) == kPeerFailure) where.remove_prefix(kPeerFailure.size());
  return {k, where};
}

}  // namespace

std::string failure_summary(const ControlBlock* cb) {
  std::vector<std::string_view> msgs(size_t(cb->world_size));
  for (int r = 0; r < cb->world_size; ++r)
    msgs[size_t(r)] = std::string_view(cb->failure[r], cb->failure_len[r].load(std::memory_order_acquire));
  // A rank's own failure, as opposed to a PeerFailure another rank's caused.
  std::vector<std::pair<int, std::string_view>> consequence(msgs.size(), {-1, {}});
  std::vector<std::string_view> own = msgs;
  for (size_t r = 0; r < msgs.size(); ++r) {
    consequence[r] = consequence_of(msgs[r], msgs);
    if (consequence[r].first >= 0) own[r] = {};
  }
  // Distinct messages in order of first appearance, each with its ranks.
  std::vector<std::pair<std::string_view, std::vector<int>>> groups;
  for (int r = 0; r < cb->world_size; ++r) {
    std::string_view msg = own[size_t(r)];
    if (msg.empty()) continue;
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
  // Then the ranks that failed only because one above did, without repeating
  // its message: a slow rank caught by the abort before it reached the same
  // error (tests/runtime_errors_cli_test.cc).
  for (size_t r = 0; r < msgs.size(); ++r)
    if (consequence[r].first >= 0)
      out += fmt::format("rank {}: stopped when rank {} failed ({})\n", r, consequence[r].first, consequence[r].second);
  return out;
}

}  // namespace symmflow::runtime
