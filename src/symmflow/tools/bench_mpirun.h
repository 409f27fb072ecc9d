// `symmflow bench collectives` started by mpirun: every process is one rank (the
// mpi backend), nothing is spawned. For each size: MPI_Allreduce, symmflow's
// all_reduce_ on dist::world(), MPI_Allreduce again, in the same processes on
// the same sizes; rank 0 prints the table. Needs a build with MPI
// (SYMMFLOW_HAVE_MPI); otherwise run_bench_mpirun is an Error saying so.
//
//   mpirun -np 4 -x SYMMFLOW_RANKS_PER_NODE=2 symmflow bench collectives --sizes 1K-16M
#pragma once
#include <string>

namespace symmflow::tools {

struct MpirunBenchOptions {
  std::string sizes = "1K,16K,256K,1M,4M,16M";  // moderate: ranks are often oversubscribed
  int trials = 7;
  std::string json, plot;
};

int run_bench_mpirun(const MpirunBenchOptions& o);

}  // namespace symmflow::tools
