// Waiting on shared memory with a deadline: spin briefly (pause), then
// sched_yield, then sleep on a futex (how long each: shm/wait_policy.h). Sleeping wakes at least every
// kLivenessPeriod to check the job's abort flag and whether the awaited peer is
// still alive, so a dead rank turns into a PeerFailure within a fraction of a
// second instead of a hang, and an overdue wait into a TimeoutError naming the
// op, the group, the waiting rank, the peer and the expected vs seen state.
//
// The fast path (condition already true) costs one load and no clock read.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "symmflow/runtime/shm/wait_policy.h"

namespace symmflow::runtime {

// The per-wait deadline in seconds: dist::set_timeout() if called, else the
// environment's SYMMFLOW_TIMEOUT, else 300.
double wait_timeout_s();
void set_wait_timeout_s(double seconds);  // <= 0 restores the environment/default

// A futex word that lives in shared memory, with a count of sleepers so that a
// waker makes the FUTEX_WAKE syscall only when somebody actually sleeps.
struct alignas(64) WakeWord {
  std::atomic<uint32_t> word{0};
  std::atomic<uint32_t> sleepers{0};
};
static_assert(std::atomic<uint32_t>::is_always_lock_free);
static_assert(std::atomic<uint64_t>::is_always_lock_free);

void notify_slow(WakeWord& w);

// Call after publishing (a release/seq_cst store) whatever a waiter waits for.
inline void notify(WakeWord& w) {
  // seq_cst pairs with the waiter's seq_cst increment of `sleepers` followed by
  // its re-check of the condition: either it sees our store or we see it sleep.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (w.sleepers.load(std::memory_order_seq_cst) != 0) notify_slow(w);
}

// Non-owning callable reference (no allocation on the slow path either).
template <class Sig> class FnRef;
template <class R, class... A> class FnRef<R(A...)> {
 public:
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, FnRef>>>
  FnRef(F&& f) : obj_((void*)&f), call_([](void* o, A... a) -> R {  // NOLINT
      return (*static_cast<std::remove_reference_t<F>*>(o))(std::forward<A>(a)...);
    }) {}
  R operator()(A... a) const { return call_(obj_, std::forward<A>(a)...); }

 private:
  void* obj_;
  R (*call_)(void*, A...);
};

// Who waits for what, for error messages and liveness checks.
struct WaitSite {
  const char* op = "wait";         // "wait_signal", "barrier", "bootstrap barrier", ...
  std::string_view what;           // the caller's label ("all_reduce step 2")
  std::string_view group;          // group name
  int rank = -1;                   // waiting rank (in the group)
  int peer = -1;                   // awaited peer (in the group), -1 = several
};

// Checks, while a wait sleeps, that the job goes on: throws PeerFailure if the
// job was aborted or if `peer` (a group rank, -1 = every member) is dead.
class LivenessCheck {
 public:
  virtual ~LivenessCheck() = default;
  virtual void check(const WaitSite& site) = 0;
  // Deadlock detection (shm/deadlock.h). wait_slow() calls it every liveness
  // period once its futex sleep has lasted one: `first` the first time in this
  // wait (publish `describe()`), `epoch` counts the wait's wake-ups by a
  // notify. Throws DeadlockError when everything the wait depends on is
  // blocked too. unblocked() ends what `first` published.
  virtual void still_blocked(const WaitSite& site, bool first, uint64_t epoch,
                             FnRef<std::string()> describe) {
    (void)site, (void)first, (void)epoch, (void)describe;
  }
  virtual void unblocked() {}
};

// "irecv tag 0 sequence 1: group 'world', rank 1 waiting for rank 0: <state>",
// plus " at prog.sf:3:8 (c10d::wait_tensor)" when a program's op is running
// (core/op_site.h): what timeouts and deadlock reports say about a wait.
std::string describe_wait(const WaitSite& site, std::string_view state);

// The slow path: blocks until ready() or throws TimeoutError / PeerFailure.
// `state()` renders the awaited state for the timeout message, e.g.
// "expected sequence >= 7, saw 6".
void wait_slow(FnRef<bool()> ready, WakeWord& wake, const WaitSite& site,
               LivenessCheck* liveness, FnRef<std::string()> state);

// The same for conditions no futex announces (a network request that only
// moves when polled): spins, yields, then sleeps in short steps (10 us growing
// to 100 us) between polls, checking liveness and the deadline as above.
void wait_poll(FnRef<bool()> ready, const WaitSite& site, LivenessCheck* liveness,
               FnRef<std::string()> state);

// Set when this process raised a TimeoutError or PeerFailure: the job is
// failing. The mpi backend then ends the MPI job at exit (MPI_Abort) instead
// of finalizing, which would wait for peers that may never arrive.
void note_comm_failure();
bool comm_failed();


inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace symmflow::runtime
