// Benchmark records (DESIGN.md §5) and what `symmflow bench collectives` does with
// them: parse the JSON lines the workers print, merge, tabulate, plot.
#pragma once
#include <string>
#include <vector>

namespace symmflow::tools {

struct BenchRecord {
  std::string op;    // all_reduce, all_gather, reduce_scatter, p2p, memcpy
  std::string impl;  // one_shot, two_shot, staged, symmflow, mpi, mpi_after, bound
  int nproc = 0;
  long long bytes = 0;
  double median_us = 0;
  double algbw_gbps = 0;
  int nodes = 0;  // nodes the ranks ran on (mpirun mode); 0: not recorded (one node)
};

// Parses the records among `text`'s lines (other lines are ignored).
std::vector<BenchRecord> parse_records(const std::string& text);
std::string records_to_json(const std::vector<BenchRecord>& rs);
// A log-log plot of latency against size, one line per (op, impl).
std::string latency_plot_svg(const std::vector<BenchRecord>& rs, const std::string& title);

}  // namespace symmflow::tools
