// One rank of `symmflow bench collectives` (started by the bench command through
// the launcher with --worker).
#pragma once
#include <functional>
#include <string>

#include "symmflow/runtime/process_group.h"

namespace symmflow::tools {

struct BenchWorkerOptions {
  std::string sizes = "1K-64M";
  std::string ops = "all_reduce,all_gather,reduce_scatter,p2p,memcpy";
  int trials = 7;
};

int run_bench_worker(const BenchWorkerOptions& o);

// Median over `trials` of the slowest rank's time per call of `op`, in µs
// (3 warm-ups, enough repetitions for ~20 ms per trial). Collective: every rank
// of `g` calls it with the same trials.
double time_collective_us(dist::ProcessGroup& g, int trials, const std::function<void()>& op);

}  // namespace symmflow::tools
