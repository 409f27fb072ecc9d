#include "symmflow/runtime/shm/wait_policy.h"

#include <sched.h>
#include <unistd.h>

#include <atomic>

#include "symmflow/core/params.h"

namespace symmflow::runtime {

namespace {
// Read on every slow wait: three relaxed loads.
std::atomic<bool> g_over{false};
std::atomic<long> g_spin_us{WaitPolicy{}.spin_us}, g_yield_us{WaitPolicy{}.yield_us};
}  // namespace

int usable_cpus() {
  const int online = int(sysconf(_SC_NPROCESSORS_ONLN));
  cpu_set_t mask;
  if (sched_getaffinity(0, sizeof mask, &mask) != 0) return online;
  const int allowed = CPU_COUNT(&mask);
  return allowed == 1 ? online : allowed;
}

WaitPolicy choose_wait_policy(int ranks_on_host) {
  WaitPolicy p;
  p.oversubscribed = params::is_set("SYMMFLOW_OVERSUBSCRIBED") ? params::flag("SYMMFLOW_OVERSUBSCRIBED")
                                                                : ranks_on_host > usable_cpus();
  if (p.oversubscribed) {  // the header says why, with the measurements
    p.spin_us = 1;
    p.yield_us = 0;
  }
  if (params::is_set("SYMMFLOW_YIELD_US")) p.yield_us = long(params::integer("SYMMFLOW_YIELD_US"));
  return p;
}

void set_wait_policy(const WaitPolicy& p) {
  g_spin_us.store(p.spin_us, std::memory_order_relaxed);
  g_yield_us.store(p.yield_us, std::memory_order_relaxed);
  g_over.store(p.oversubscribed, std::memory_order_relaxed);
}

WaitPolicy wait_policy() {
  return {g_over.load(std::memory_order_relaxed), g_spin_us.load(std::memory_order_relaxed),
          g_yield_us.load(std::memory_order_relaxed)};
}

}  // namespace symmflow::runtime
