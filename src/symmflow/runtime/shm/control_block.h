// ControlBlock: the job's rendezvous, one small shared-memory segment created by
// the launcher before it starts the ranks (its name is SYMMFLOW_RENDEZVOUS).
// It holds the job token, every rank's pid and state, the abort flag the
// launcher raises when a rank dies, a bootstrap barrier and per-rank slots for
// exchanging small blobs (segment names) while groups are created, and the
// board of blocked waits that deadlock detection reads (deadlock.h).
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "symmflow/runtime/shm/deadlock.h"
#include "symmflow/runtime/shm/wait.h"

namespace symmflow::runtime {

inline constexpr int kMaxRanks = 128;
inline constexpr size_t kBlobBytes = 512;
inline constexpr size_t kFailureBytes = 2048;
inline constexpr uint64_t kControlMagic = 0x31424354434d5953ull;  // "SYMCTCB1"
inline constexpr uint32_t kControlVersion = 2;

enum class RankState : uint32_t { absent = 0, attached = 1, detached = 2 };

struct ControlBlock {
  uint64_t magic;
  uint32_t version;
  int32_t world_size;
  char job_id[32];
  char token[33];  // 32 hex chars + NUL
  // Abort: 0 = running, 1 = being written, 2 = aborted (reason is complete).
  alignas(64) std::atomic<uint32_t> abort_state;
  int32_t abort_rank;  // the rank that caused it, -1 if none (e.g. job timeout)
  char abort_reason[8192];  // a deadlock report names every blocked rank
  alignas(64) std::atomic<int32_t> pid[kMaxRanks];
  std::atomic<uint32_t> state[kMaxRanks];
  std::atomic<uint32_t> attached;
  // Bootstrap barrier: a counter and a generation that waiters sleep on.
  alignas(64) std::atomic<uint32_t> barrier_count;
  std::atomic<uint32_t> barrier_generation;
  WakeWord barrier_wake;
  alignas(64) char blob[kMaxRanks][kBlobBytes];
  std::atomic<uint32_t> blob_len[kMaxRanks];
  // What each rank is blocked in, for deadlock detection (deadlock.h).
  WaitBoardSlot waits[kMaxRanks];
  // The error each failed rank ended with (record_failure), printed by the
  // launcher once per distinct message instead of once per rank.
  char failure[kMaxRanks][kFailureBytes];
  std::atomic<uint32_t> failure_len[kMaxRanks];
};

// Records the error `rank` ends with, for the launcher to print.
void record_failure(ControlBlock* cb, int rank, std::string_view message);
// The recorded errors, one line per distinct message, in rank order of first
// appearance: "all 4 ranks: <msg>", or "ranks 0, 2: <msg>" and "rank 1: <msg>";
// "" when no rank recorded one. A rank whose error is only the PeerFailure
// another rank's failure caused (its wait ended by that rank's abort) follows
// as "rank 3: stopped when rank 0 failed (<where it waited>)", without that
// message again.
std::string failure_summary(const ControlBlock* cb);

// Raises the abort flag once (the first reason wins) and wakes the bootstrap
// barrier's sleepers. Safe from the launcher and from any rank.
// Returns true when this call raised it, false when the job was already aborted.
bool abort_job(ControlBlock* cb, int rank, const std::string& reason);
bool job_aborted(const ControlBlock* cb);
std::string abort_message(const ControlBlock* cb);  // "" when not aborted
// What is wrong with the rank in `slot` ("rank 2 (pid 77) is dead"), or "".
// `rank` is the number to name it by (slot and rank differ in node-local blocks).
std::string slot_problem(const ControlBlock* cb, int slot, int rank);

}  // namespace symmflow::runtime
