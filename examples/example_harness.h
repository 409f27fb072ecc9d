// What every example program does the same way, so that each example's file
// holds only its computation: the options (--check, --iters N, --size N,
// --steps N, --help), eager vs sf::compile compared bitwise on every rank, and
// per-iteration times through symmflow/tools/bench_timing.h (the one timing loop).
//
//   int main(int argc, char** argv) {
//     auto opt = sfex::start(argc, argv, kUsage, {.size = 256, .steps = 4});  // dist::init() too
//     auto make = [&] { return std::vector<sf::Tensor>{...fresh inputs...}; };
//     auto eager = [&](const std::vector<sf::Tensor>& in) { return step(in[0], in[1]); };
//     auto fast = sf::compile(step, "step");
//     auto compiled = [&](const std::vector<sf::Tensor>& in) { return fast(in[0], in[1]); };
//     return sfex::run(opt, make, eager, compiled);
//   }
#pragma once
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "symmflow/symmflow.h"
#include "symmflow/tools/bench_timing.h"

namespace sfex {

namespace sf = symmflow;

struct Options {
  bool check = false;  // eager vs compiled, bitwise, on every rank
  int iters = 0;       // > 0: time that many calls of each mode
  int64_t size = 0;    // the example's problem size (what it means: its --help)
  int steps = 0;       // the example's unrolled steps (0: it takes no --steps)
};

inline bool is_root() { return sf::dist::world().rank() == 0; }

// Parses argv; a bad option exits 2 with a message (rank 0 prints it).
inline Options parse_options(int argc, char** argv, const char* usage, Options opt) {
  auto bad = [&](const std::string& why) {
    if (is_root()) fmt::print(stderr, "{}: {}\n{}", argv[0], why, usage);
    std::exit(2);
  };
  auto number = [&](int& i, const char* flag, int64_t min) {
    if (i + 1 >= argc) bad(fmt::format("{} expects a number, found nothing", flag));
    char* end = nullptr;
    long long v = std::strtoll(argv[++i], &end, 10);
    if (*end != '\0' || v < min) bad(fmt::format("{} expects an integer >= {}, found '{}'", flag, min, argv[i]));
    return int64_t(v);
  };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--check") {
      opt.check = true;
    } else if (a == "--iters") {
      opt.iters = int(number(i, "--iters", 1));
    } else if (a == "--size") {
      opt.size = number(i, "--size", 1);
    } else if (a == "--steps" && opt.steps != 0) {  // only examples that have steps
      opt.steps = int(number(i, "--steps", 1));
    } else {
      bad(fmt::format("unknown option '{}'", a));
    }
  }
  return opt;
}

// An example's first line: --help prints `usage` and exits 0 (no launcher
// needed), then dist::init() joins the job `symmflow launch` started, then the
// options are parsed against the example's defaults.
inline Options start(int argc, char** argv, const char* usage, Options defaults) {
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
      fmt::print("{}", usage);
      std::exit(0);
    }
  sf::dist::init();
  return parse_options(argc, argv, usage, defaults);
}

// True on every rank when `ok` is true on every rank (an all_reduce of the failures).
inline bool all_ranks(bool ok) {
  auto flag = sf::symm::empty({1}, sf::DType::f32);
  flag.data<float>()[0] = ok ? 0.0f : 1.0f;
  sf::dist::all_reduce_(flag);
  return flag.data<float>()[0] == 0.0f;
}

// Compares two tensors bit for bit; prints the first differing element.
inline bool same_bits(const sf::Tensor& eager, const sf::Tensor& compiled, const std::string& what) {
  const int rank = sf::dist::world().rank();
  if (eager.type_string() != compiled.type_string()) {
    fmt::print("rank {}: {}: eager is {} but compiled is {}\n", rank, what, eager.type_string(),
               compiled.type_string());
    return false;
  }
  auto a = sf::contiguous(eager), b = sf::contiguous(compiled);
  const auto* pa = static_cast<const unsigned char*>(a.data_ptr());
  const auto* pb = static_cast<const unsigned char*>(b.data_ptr());
  if (std::memcmp(pa, pb, a.nbytes()) == 0) return true;
  const size_t item = a.itemsize();
  size_t i = 0;
  while (std::memcmp(pa + i * item, pb + i * item, item) == 0) ++i;
  sf::Tensor ea = sf::view(a, {a.numel()}), eb = sf::view(b, {b.numel()});
  fmt::print("rank {}: {} differs at element {}: eager {} compiled {}\n", rank, what, i,
             sf::select(ea, 0, int64_t(i)).item(), sf::select(eb, 0, int64_t(i)).item());
  return false;
}

// Median seconds per call over `iters` calls, every rank in step (a barrier
// before each call, the slowest rank's time).
inline double median_seconds(const std::function<void()>& call, int iters) {
  auto& g = sf::dist::world();
  sfbench::TimingOptions o;
  o.warmups = 2;  // the compiled mode traces and compiles on its first call
  o.trials = iters;
  o.min_reps = o.max_reps = 1;
  o.sync = [&] { g.barrier("example timing"); };
  o.agree = [](double s) {
    auto t = sf::symm::empty({1}, sf::DType::f64);
    t.data<double>()[0] = s;
    sf::dist::all_reduce_(t, sf::dist::ReduceOp::max);
    return t.data<double>()[0];
  };
  return sfbench::time_op(call, o).median;
}

using Inputs = std::vector<sf::Tensor>;
using Mode = std::function<std::vector<sf::Tensor>(const Inputs&)>;

// The example's main: --check (also what a run without --iters does) runs
// `eager` and `compiled` twice each on equal fresh inputs (from `make_inputs`,
// called once per mode) and compares every output and every input's final
// contents (the function may write its inputs) bitwise, on every rank; --iters
// times both modes. Returns the exit status.
inline int run(const Options& opt, const std::function<Inputs()>& make_inputs, const Mode& eager,
               const Mode& compiled) {
  auto& g = sf::dist::world();
  int status = 0;
  if (opt.check || opt.iters == 0) {
    Inputs in_e = make_inputs(), in_c = make_inputs();
    auto out_e = eager(in_e);
    auto out_c = compiled(in_c);
    auto again = compiled(in_c);  // the replay from the cache must agree as well
    auto again_e = eager(in_e);
    bool ok = out_e.size() == out_c.size();
    for (size_t i = 0; ok && i < out_e.size(); ++i) {
      ok = same_bits(out_e[i], out_c[i], fmt::format("output {}", i)) && ok;
      ok = same_bits(again_e[i], again[i], fmt::format("output {} (second call)", i)) && ok;
    }
    for (size_t i = 0; i < in_e.size(); ++i) ok = same_bits(in_e[i], in_c[i], fmt::format("input {}", i)) && ok;
    const bool every = all_ranks(ok);
    if (is_root() && every)
      fmt::print("check: OK ({} ranks, {} output{} and {} input{} bitwise equal, two calls each, eager vs compiled)\n",
                 g.size(), out_e.size(), out_e.size() == 1 ? "" : "s", in_e.size(), in_e.size() == 1 ? "" : "s");
    if (is_root() && !every) fmt::print("check: MISMATCH (the first difference on each rank is printed above)\n");
    status = every ? 0 : 1;
  }
  if (opt.iters > 0) {
    Inputs in_e = make_inputs(), in_c = make_inputs();
    double te = median_seconds([&] { eager(in_e); }, opt.iters);
    double tc = median_seconds([&] { compiled(in_c); }, opt.iters);
    if (is_root())
      fmt::print("{} ranks, median of {} calls: eager {:.6f} s, compiled {:.6f} s per iteration ({:.2f}x)\n", g.size(),
                 opt.iters, te, tc, tc > 0 ? te / tc : 0.0);
  }
  return status;
}

}  // namespace sfex
