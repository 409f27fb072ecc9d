// How a wait spends its time before it sleeps on the futex (shm/wait.cc),
// decided in one place, choose_wait_policy(), once at dist::init():
//
//  - ranks on this host <= CPUs they may use: spin 20 us (a peer on another
//    core answers within ~0.1 us), yield 100 us, then sleep;
//  - more ranks than CPUs (oversubscribed): the peer we wait for may need
//    our CPU, so spin 1 us only and go to sleep on the futex at once (the
//    notify wakes us). No yield phase: next to CPU hogs CFS runs yielders
//    last — 2000 barriers at 4 ranks beside two busy loops took 5.8 s with a
//    200 us yield phase, 0.18 s without (2026-11-23) — and on 2026-11-25, a
//    4 KiB all_reduce at 4 ranks on this 2-CPU VM under other builds took
//    40-18000 us with a 50 us yield phase against 81-98 us without, in the
//    same runs (docs/performance.md, "Oversubscribed waits").
//
// SYMMFLOW_OVERSUBSCRIBED=1|0 forces the choice (ranks on one machine started
// by separate launchers cannot count each other), SYMMFLOW_YIELD_US sets the
// yield phase's length either way.
#pragma once

namespace symmflow::runtime {

struct WaitPolicy {
  bool oversubscribed = false;
  long spin_us = 20;
  long yield_us = 100;
};

// CPUs this process may run on: its sched_getaffinity mask, except that a
// rank pinned to one CPU (symmflow launch --pin, mpirun --bind-to core: they
// pin one rank per CPU only when ranks fit) counts the online CPUs.
int usable_cpus();
// The policy for `ranks_on_host` ranks on this machine, with the overrides.
WaitPolicy choose_wait_policy(int ranks_on_host);

void set_wait_policy(const WaitPolicy& p);
WaitPolicy wait_policy();
inline bool oversubscribed() { return wait_policy().oversubscribed; }

}  // namespace symmflow::runtime
