// One rank of `symmflow bench collectives` (started by the bench command through
// the launcher with --worker).
#pragma once
#include <string>

namespace symmflow::tools {

struct BenchWorkerOptions {
  std::string sizes = "1K-64M";
  std::string ops = "all_reduce,all_gather,reduce_scatter,p2p,memcpy";
  int trials = 7;
};

int run_bench_worker(const BenchWorkerOptions& o);

}  // namespace symmflow::tools
