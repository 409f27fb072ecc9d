// Deadlock detection on one node. A wait that has slept for a liveness period
// (shm/wait.cc) publishes, in its rank's slot of the job's control block, what
// it waits for and which world ranks could complete it (the members of its
// group); leaving the wait withdraws it. While it stays blocked, the rank
// looks at the board on every liveness check: when every rank its wait
// depends on, and every rank theirs depend on, is blocked too, and none of
// those waits has ended or been woken for kGrace, nothing in flight can move
// (a signal, a P2P event or a collective's arrival wakes its receiver and
// ends or restarts the wait), so the job is deadlocked. The rank raises the
// job's abort flag with a report naming every such rank's pending op and its
// .sf location; every rank then fails with that report (DeadlockError).
//
// Not blocked, hence never part of a deadlock: a rank computing, a wait still
// spinning or yielding, a wait that polls the network (mpi backend), a rank
// sleeping in user code. A rank that has left (detached or dead) is reported
// by the liveness checks instead.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "symmflow/runtime/shm/wait.h"

namespace symmflow::runtime {

struct ControlBlock;

inline constexpr size_t kWaitTextBytes = 512;  // a long .sf path included
// How long a blocked set must stay unchanged to be a deadlock. Every waiter
// re-checks its condition at least every 50 ms (the liveness period), so this
// is eight looks each.
inline constexpr std::chrono::milliseconds kDeadlockGrace{400};

// One rank's entry in the control block. Written by its rank only.
struct WaitBoardSlot {
  // Odd while a published wait lasts: +1 when it is published, +1 when it ends.
  alignas(64) std::atomic<uint64_t> gen{0};
  // Wake-ups of the published wait by a notify (something moved for it).
  std::atomic<uint64_t> epoch{0};
  // The world ranks whose progress could end the wait (bit r of word r / 64).
  std::atomic<uint64_t> depends[2]{};
  // `text` describes the wait of this gen (written before it is set).
  std::atomic<uint64_t> text_gen{0};
  char text[kWaitTextBytes]{};
};

class DeadlockDetector {
 public:
  DeadlockDetector(ControlBlock* cb, int rank) : cb_(cb), rank_(rank) {}
  // A look by a wait that still sleeps (LivenessCheck::still_blocked): the
  // first one publishes it, depending on `world_ranks`, described by
  // `describe()` ("irecv tag 0 sequence 1: group 'world', rank 0 waiting for
  // rank 1: ... at prog.sf:3:8 (c10d::wait_tensor)"); later ones its epoch.
  // Returns the report when the wait is part of a deadlock, else "".
  std::string still_blocked(const std::vector<int>& world_ranks, bool first, uint64_t epoch,
                            FnRef<std::string()> describe);
  // The wait ended (LivenessCheck::unblocked).
  void withdraw();

 private:
  std::string look();
  ControlBlock* cb_;
  int rank_;
  bool published_ = false;
  std::vector<uint64_t> last_;  // (rank, gen, epoch) of the blocked set at the last look
  std::chrono::steady_clock::time_point since_{};
};

// Reports start with this; every rank fails with the report itself.
inline constexpr std::string_view kDeadlockPrefix = "deadlock: ";
// Throws DeadlockError(report) when `problem` ("job aborted: <reason>", from
// Backend::peer_problem) is a deadlock report; the liveness checks call it
// first, so every rank of a deadlocked job throws the same message.
void throw_if_deadlock(std::string_view problem);

}  // namespace symmflow::runtime
