// Compile-time benchmark (issue: compiler core): trace + compile graphs of 1k,
// 10k and 100k nodes and report the median time of each phase and its growth.
// The program is a chain of blocks of 10 ops mixing every shape the compiler
// handles: pure ops, views, writes through views, in-place ops on intermediates,
// a collective. Target: 100k nodes in under 2 s, near-linear growth.
//
//   build/dev/bench/sf_compile_time [--sizes 1000,10000,100000] [--trials 3] [--verify]
#include <fmt/format.h>

#include <cstring>
#include <string>
#include <vector>

#include "bench_common.h"
#include "symmflow/exec/compiled_program.h"
#include "symmflow/frontend/tensor_api.h"
#include "symmflow/frontend/tracer.h"
#include "symmflow/ir/verifier.h"
#include "symmflow/passes/pipeline.h"

namespace sf = symmflow;

// About 10 nodes per block.
sf::Tensor block(sf::Tensor x, int i) {
  sf::Tensor y = x * 1.0001 + 0.5;              // 2: mul, add
  sf::Tensor s = sf::slice(y, 0, 0, 32);        // 1: view
  s += 1.0;                                     // 1: write through the view
  sf::Tensor r = sf::relu(y);                   // 1
  r *= 0.5;                                     // 1: in place on an intermediate
  sf::Tensor t = sf::select(sf::view(r, {4, 16}), 0, i % 4);  // 2: views
  sf::Tensor u = sf::sum(t, {0}, true);         // 1
  return r + u;                                 // 1 (broadcast add)
}

int main(int argc, char** argv) {
  std::vector<int64_t> sizes = {1000, 10000, 100000};
  int trials = 3;
  bool verify = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--sizes") && i + 1 < argc) sizes = sfbench::parse_sizes(argv[++i]);
    else if (!std::strcmp(argv[i], "--trials") && i + 1 < argc) trials = std::stoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--verify")) verify = true;
    else {
      fmt::print(stderr, "usage: sf_compile_time [--sizes 1000,10000,100000] [--trials N] [--verify]\n");
      return 2;
    }
  }
  fmt::print("{:>8} {:>10} {:>10} {:>10} {:>10} {:>12} {:>12}\n", "nodes", "trace_ms", "passes_ms", "load_ms",
             "total_ms", "us_per_node", "verify_ms");
  double prev_per_node = 0;
  for (int64_t target : sizes) {
    std::vector<double> tt, tp, tl, tv;
    size_t nodes = 0;
    for (int trial = 0; trial < trials; ++trial) {
      double t0 = sfbench::now_s();
      sf::frontend::Tracer tr("chain", 0, 1);
      sf::Tensor x = tr.input(sf::Tensor::empty({64}));
      for (int i = 0; int64_t(i) * 10 < target; ++i) x = block(x, i);
      tr.set_outputs({x});
      auto g = tr.finish();
      double t1 = sfbench::now_s();
      nodes = g->size();
      double tverify = 0;
      if (verify) {
        double a = sfbench::now_s();
        sf::ir::verify(*g, "trace");
        tverify = sfbench::now_s() - a;
      }
      sf::passes::PipelineOptions opts;
      opts.verify_each = false;
      sf::passes::optimize(*g, opts);
      double t2 = sfbench::now_s();
      sf::exec::CompiledProgram prog(std::move(g));
      double t3 = sfbench::now_s();
      tt.push_back(t1 - t0);
      tp.push_back(t2 - t1);
      tl.push_back(t3 - t2);
      tv.push_back(tverify);
    }
    // Each trial is one repetition of a seconds-long phase: no batching, the
    // phases' samples go through the shared summary (bench/timing.h).
    double trace = sfbench::stats_of(tt).median, pass = sfbench::stats_of(tp).median,
           load = sfbench::stats_of(tl).median;
    double total = trace + pass + load;
    double per_node = total / double(nodes) * 1e6;
    fmt::print("{:>8} {:>10.1f} {:>10.1f} {:>10.1f} {:>10.1f} {:>12.2f} {:>12}\n", nodes, trace * 1e3, pass * 1e3,
               load * 1e3, total * 1e3, per_node, verify ? fmt::format("{:.1f}", sfbench::stats_of(tv).median * 1e3) : "-");
    if (prev_per_node > 0) fmt::print("{:>8} growth per node vs previous size: {:.2f}x\n", "", per_node / prev_per_node);
    prev_per_node = per_node;
  }
}
