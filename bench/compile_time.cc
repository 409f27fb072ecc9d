// Compile-time benchmark: trace + compile graphs of 1k, 10k and 100k nodes, the
// sizes interleaved in rounds, and report the median time of each phase, its
// growth and the 100k/10k ratio (of the medians, and each round's).
// The program is a chain of blocks of 10 ops mixing every shape the compiler
// handles: pure ops, views, writes through views, in-place ops on
// intermediates; and an in-place all_reduce every K ops (--all-reduce-every,
// default 50: each collective gets its wait and start, the case that was
// quadratic when a replace_uses scanned the whole graph). Targets (issue 17):
// 100k nodes with an all_reduce every 50 ops in under 2 s; 100k/10k time <= 15.
//
//   build/dev/symmflow launch --nproc 1 -- build/dev/bench/sf_compile_time
//       [--sizes 1000,10000,100000] [--trials 3] [--all-reduce-every 50] [--verify]
//
// Under `symmflow launch` the load phase (CompiledProgram: arenas, the
// symmetric one included) is timed too; run alone, a program with collectives
// has no world to allocate its symmetric arena in, and load shows "-".
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "symmflow/tools/bench_common.h"
#include "symmflow/frontend/dist_api.h"
#include "symmflow/runtime/world.h"
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

// One trace + compile + load of a graph of about `target` nodes.
struct Sample {
  size_t nodes = 0;
  double trace = 0, passes = 0, load = 0, verify = 0;  // seconds
  std::vector<std::pair<std::string, double>> steps;   // each pipeline step's
  double total() const { return trace + passes + load; }
};

// Each pipeline step's median time over the trials, and its growth against the
// previous size's ("fuse_pointwise 14" or "fuse_pointwise 243 (17.4x)"): which
// steps grow faster than the node count.
std::string steps_line(const std::vector<Sample>& now, const std::vector<Sample>* prev) {
  auto median_of = [](const std::vector<Sample>& s, size_t step) {
    std::vector<double> t;
    for (const Sample& x : s)
      if (step < x.steps.size()) t.push_back(x.steps[step].second);
    return sfbench::stats_of(t).median;
  };
  std::string out;
  for (size_t i = 0; i < now.back().steps.size(); ++i) {
    const double t = median_of(now, i);
    out += fmt::format(" {} {:.0f}", now.back().steps[i].first, t * 1e3);
    if (!prev || prev->empty() || i >= prev->back().steps.size()) continue;
    if (const double before = median_of(*prev, i); before > 0) out += fmt::format(" ({:.1f}x)", t / before);
  }
  return out;
}

Sample compile_once(int64_t target, int blocks_per_all_reduce, bool verify, bool launched) {
  Sample out;
  double t0 = sfbench::now_s();
  sf::frontend::Tracer tr("chain", 0, 1);
  sf::Tensor x = tr.input(sf::Tensor::empty({64}));
  for (int i = 0; int64_t(i) * 10 < target; ++i) {
    x = block(x, i);
    if (blocks_per_all_reduce && (i + 1) % blocks_per_all_reduce == 0) sf::dist::all_reduce_(x);
  }
  tr.set_outputs({x});
  auto g = tr.finish();
  double t1 = sfbench::now_s();
  out.nodes = g->size();
  if (verify) {
    double a = sfbench::now_s();
    sf::ir::verify(*g, "trace");
    out.verify = sfbench::now_s() - a;
  }
  sf::passes::PipelineOptions opts;
  opts.verify_each = false;
  // Each pipeline step's time, from the dump hook (called after every step).
  double last = sfbench::now_s();
  opts.dump = [&](std::string_view step, const sf::ir::Graph&) {
    const double now = sfbench::now_s();
    out.steps.emplace_back(std::string(step), now - last);
    last = now;
  };
  sf::passes::optimize(*g, opts);
  double t2 = sfbench::now_s();
  const bool loadable = launched || g->plan().arena_bytes[1] == 0;
  std::unique_ptr<sf::exec::CompiledProgram> prog;  // freed after the clock stops
  if (loadable) prog = std::make_unique<sf::exec::CompiledProgram>(std::move(g));
  double t3 = loadable ? sfbench::now_s() : t2;
  out.trace = t1 - t0;
  out.passes = t2 - t1;
  out.load = t3 - t2;
  return out;
}

int main(int argc, char** argv) {
  std::vector<int64_t> sizes = {1000, 10000, 100000};
  int trials = 3;
  int64_t every = 50;
  bool verify = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--sizes") && i + 1 < argc) sizes = sfbench::parse_sizes(argv[++i]);
    else if (!std::strcmp(argv[i], "--trials") && i + 1 < argc) trials = std::stoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--all-reduce-every") && i + 1 < argc) every = std::stoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--verify")) verify = true;
    else {
      fmt::print(stderr,
                 "usage: sf_compile_time [--sizes 1000,10000,100000] [--trials N] [--all-reduce-every OPS (0: "
                 "none)] [--verify]\n");
      return 2;
    }
  }
  const bool launched = std::getenv("SYMMFLOW_RANK") != nullptr;
  if (launched) sf::dist::init();
  const int blocks_per_all_reduce = every > 0 ? int(std::max<int64_t>(1, every / 10)) : 0;
  fmt::print("all_reduce every {} ops; {}\n", every > 0 ? fmt::format("{}", blocks_per_all_reduce * 10) : "-",
             launched ? "load timed (world initialized)" : "load timed only without collectives (not launched)");
  fmt::print("{:>8} {:>10} {:>10} {:>10} {:>10} {:>12} {:>12}\n", "nodes", "trace_ms", "passes_ms", "load_ms",
             "total_ms", "us_per_node", "verify_ms");
  // One round compiles every size once; the rounds repeat (--trials). Sizes
  // interleaved, not all trials of one size and then the next: this machine's
  // speed drifts by 2x over minutes (other tenants), and the ratio of two sizes
  // timed minutes apart measured the drift as much as the compiler.
  std::vector<std::vector<Sample>> samples(sizes.size());
  for (int trial = 0; trial < trials; ++trial)
    for (size_t k = 0; k < sizes.size(); ++k) samples[k].push_back(compile_once(sizes[k], blocks_per_all_reduce, verify, launched));
  double prev_per_node = 0;
  std::vector<std::pair<size_t, double>> totals;  // (nodes, median trace + passes + load)
  for (size_t k = 0; k < sizes.size(); ++k) {
    std::vector<double> tt, tp, tl, tv;
    for (const Sample& x : samples[k]) {
      tt.push_back(x.trace);
      tp.push_back(x.passes);
      tl.push_back(x.load);
      tv.push_back(x.verify);
    }
    const size_t nodes = samples[k].back().nodes;
    // Each trial is one repetition of a seconds-long phase: no batching, the
    // phases' samples go through the shared summary (src/symmflow/tools/bench_timing.h).
    double trace = sfbench::stats_of(tt).median, pass = sfbench::stats_of(tp).median,
           load = sfbench::stats_of(tl).median;
    double total = trace + pass + load;
    double per_node = total / double(nodes) * 1e6;
    const bool loaded = launched || every <= 0;
    fmt::print("{:>8} {:>10.1f} {:>10.1f} {:>10} {:>10.1f} {:>12.2f} {:>12}\n", nodes, trace * 1e3, pass * 1e3,
               loaded ? fmt::format("{:.1f}", load * 1e3) : "-", total * 1e3, per_node,
               verify ? fmt::format("{:.1f}", sfbench::stats_of(tv).median * 1e3) : "-");
    if (prev_per_node > 0) fmt::print("{:>8} growth per node vs previous size: {:.2f}x\n", "", per_node / prev_per_node);
    prev_per_node = per_node;
    totals.emplace_back(nodes, total);
    fmt::print("{:>8} passes, ms (medians):{}\n", "", steps_line(samples[k], k ? &samples[k - 1] : nullptr));
  }
  // The measure: total time at the largest size over the time at a
  // size ten times smaller (linear: 10; the target allows 15).
  // Each round's own ratio too (its two sizes timed seconds apart): the spread.
  for (size_t b = 0; b < totals.size(); ++b)
    for (size_t s = 0; s < totals.size(); ++s) {
      const auto [big_n, big_t] = totals[b];
      const auto [small_n, small_t] = totals[s];
      if (!(small_n * 9 < big_n && big_n < small_n * 11)) continue;
      std::string rounds;
      for (int t = 0; t < trials; ++t)
        rounds += fmt::format(" {:.1f}", samples[b][size_t(t)].total() / samples[s][size_t(t)].total());
      fmt::print("ratio {}/{} nodes: {:.1f}x time (medians); per round:{}\n", big_n, small_n, big_t / small_t, rounds);
      // Each round's two times: the first round's small size pays the process's
      // one-time costs (lazy registrations, the heap's first growth).
      for (int t = 0; t < trials; ++t)
        fmt::print("  round {}: {:.1f} ms, {:.1f} ms\n", t, samples[s][size_t(t)].total() * 1e3,
                   samples[b][size_t(t)].total() * 1e3);
    }
}
