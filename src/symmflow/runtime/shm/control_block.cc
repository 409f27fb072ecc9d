#include "symmflow/runtime/shm/control_block.h"

#include <signal.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

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

}  // namespace symmflow::runtime
