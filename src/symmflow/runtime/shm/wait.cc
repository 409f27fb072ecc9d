#include "symmflow/runtime/shm/wait.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>

#include "symmflow/core/error.h"
#include "symmflow/core/op_site.h"
#include "symmflow/core/params.h"
#include "symmflow/runtime/shm/wait_policy.h"

namespace symmflow::runtime {

namespace {

std::atomic<double> g_timeout_override{0.0};
std::atomic<bool> g_comm_failed{false};

// Read at every slow wait (cached by params; dist::init() re-reads the environment).
double env_timeout() { return params::seconds("SYMMFLOW_TIMEOUT"); }

// How often a sleeping waiter re-checks abort flag, peers and deadline.
constexpr auto kLivenessPeriod = std::chrono::milliseconds(50);

long futex(std::atomic<uint32_t>* addr, int op, uint32_t val, const timespec* ts) {
  // Not FUTEX_PRIVATE_FLAG: the word lives in memory shared between processes.
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(addr), op, val, ts, nullptr, 0);
}

[[noreturn]] void throw_timeout(const WaitSite& site, double timeout_s,
                                FnRef<std::string()> state) {
  note_comm_failure();
  throw TimeoutError(fmt::format(
      "timeout after {:.3g} s in {} (raise SYMMFLOW_TIMEOUT or dist::set_timeout() if the peer is "
      "just slow)", timeout_s, describe_wait(site, state())));
}

using Clock = std::chrono::steady_clock;

// What every waiting loop does between looks at its condition: check the
// peers every kLivenessPeriod, then the deadline. True when ready() turned
// true meanwhile (the caller returns): a peer may have published what we wait
// for and then left or died, and what it published still counts.
bool checkpoint(Clock::time_point now, Clock::time_point& next_check, Clock::time_point deadline,
                double timeout_s, FnRef<bool()> ready, const WaitSite& site,
                LivenessCheck* liveness, FnRef<std::string()> state) {
  if (now >= next_check) {
    if (liveness) {
      try {
        liveness->check(site);
      } catch (...) {
        if (ready()) return true;
        note_comm_failure();
        throw;
      }
    }
    next_check = now + kLivenessPeriod;
  }
  if (now >= deadline) {
    if (ready()) return true;
    throw_timeout(site, timeout_s, state);
  }
  return false;
}

}  // namespace

std::string describe_wait(const WaitSite& site, std::string_view state) {
  std::string peer = site.peer >= 0 ? fmt::format("rank {}", site.peer) : "its peers";
  std::string text = fmt::format("{}{}{}: group '{}', rank {} waiting for {}: {}", site.op,
                                 site.what.empty() ? "" : " ", site.what, site.group, site.rank,
                                 peer, state);
  if (const OpSite* op = current_op_site()) {
    std::string where = op->where();
    text += where.empty() ? fmt::format(" (in {})", op->op) : fmt::format(" at {} ({})", where, op->op);
  }
  return text;
}

double wait_timeout_s() {
  double o = g_timeout_override.load(std::memory_order_relaxed);
  return o > 0 ? o : env_timeout();
}

void set_wait_timeout_s(double seconds) { g_timeout_override.store(seconds > 0 ? seconds : 0.0); }

void note_comm_failure() { g_comm_failed.store(true); }
bool comm_failed() { return g_comm_failed.load(); }


void notify_slow(WakeWord& w) {
  w.word.fetch_add(1, std::memory_order_seq_cst);
  futex(&w.word, FUTEX_WAKE, INT_MAX, nullptr);
}

void wait_slow(FnRef<bool()> ready, WakeWord& wake, const WaitSite& site,
               LivenessCheck* liveness, FnRef<std::string()> state) {
  const auto start = Clock::now();
  const double timeout_s = wait_timeout_s();
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(timeout_s));
  const WaitPolicy policy = wait_policy();  // shm/wait_policy.h: why these lengths

  // Phase 1: spin. Cross-core signal latency is ~100 ns, a futex round trip
  // several microseconds, so a short spin catches the common case.
  const auto spin_until = start + std::chrono::microseconds(policy.spin_us);
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (ready()) return;
      cpu_relax();
    }
    if (Clock::now() >= spin_until) break;
  }
  // Phase 2: yield. Lets a co-scheduled peer run without paying for a sleep.
  const auto yield_until = Clock::now() + std::chrono::microseconds(policy.yield_us);
  while (Clock::now() < yield_until) {
    if (ready()) return;
    sched_yield();
  }
  // Phase 3: sleep on the futex, waking every kLivenessPeriod. A sleep that
  // lasted a period is published as blocked (deadlock detection), and
  // withdrawn however the wait ends.
  auto next_check = Clock::now();
  const auto sleep_start = next_check;
  uint64_t epoch = 0;  // wake-ups by a notify: something moved for this wait
  struct Published {
    LivenessCheck* liveness;
    bool yes = false;
    ~Published() {
      if (yes) liveness->unblocked();
    }
  } published{liveness};
  for (;;) {
    auto now = Clock::now();
    const bool look = now >= next_check && now - sleep_start >= kLivenessPeriod;
    if (checkpoint(now, next_check, deadline, timeout_s, ready, site, liveness, state)) return;
    if (look && liveness) {
      try {
        liveness->still_blocked(site, !published.yes, epoch,
                                [&] { return describe_wait(site, state()); });
        published.yes = true;
      } catch (...) {
        if (ready()) return;
        note_comm_failure();
        throw;
      }
    }
    uint32_t seen = wake.word.load(std::memory_order_seq_cst);
    wake.sleepers.fetch_add(1, std::memory_order_seq_cst);
    if (ready()) {
      wake.sleepers.fetch_sub(1, std::memory_order_seq_cst);
      return;
    }
    auto until = std::min(deadline, next_check);
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(until - now).count();
    if (ns < 1000) ns = 1000;
    timespec ts{time_t(ns / 1000000000), long(ns % 1000000000)};
    futex(&wake.word, FUTEX_WAIT, seen, &ts);  // EAGAIN/ETIMEDOUT/EINTR: just re-check
    wake.sleepers.fetch_sub(1, std::memory_order_seq_cst);
    if (wake.word.load(std::memory_order_relaxed) != seen) ++epoch;
    if (ready()) return;
  }
}

void wait_poll(FnRef<bool()> ready, const WaitSite& site, LivenessCheck* liveness,
               FnRef<std::string()> state) {
  if (ready()) return;
  const auto start = Clock::now();
  const double timeout_s = wait_timeout_s();
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(timeout_s));
  const bool over = oversubscribed();
  // Short sleeps must be short: Linux pads every timed sleep by the timer
  // slack (50 us by default), which would stall a transfer that moves only
  // while polled. Once per process.
  static const bool slack_set = [] {
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);  // 1 us
    return true;
  }();
  (void)slack_set;
  // Spin, then yield: a message on a fast link completes within microseconds,
  // and a large one keeps moving only while we poll. With a core of our own,
  // yielding costs nobody anything, so it lasts (2 ms) before sleeps start.
  const auto spin_until = start + std::chrono::microseconds(over ? 1 : 20);
  const auto yield_until = spin_until + std::chrono::microseconds(over ? 0 : 2000);
  auto next_check = start + kLivenessPeriod;
  long sleep_us = 10;
  for (;;) {
    if (ready()) return;
    auto now = Clock::now();
    if (checkpoint(now, next_check, deadline, timeout_s, ready, site, liveness, state)) return;
    if (now < spin_until) {
      for (int i = 0; i < 64; ++i) cpu_relax();
    } else if (now < yield_until) {
      sched_yield();
    } else {
      // Polling is what moves the request (MPI progresses inside test calls),
      // so sleep only briefly: 10 us doubling up to 100 us.
      timespec ts{0, sleep_us * 1000};
      nanosleep(&ts, nullptr);
      sleep_us = std::min(sleep_us * 2, 100L);
    }
  }
}

}  // namespace symmflow::runtime
