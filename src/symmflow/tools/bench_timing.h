// The one timing loop of the benchmarks (DESIGN.md §7 "How to measure here"):
// warm up, size a batch of repetitions to a target time, time `trials`
// batches, report the median (and min, max) time per operation. Every
// benchmark program (symmflow bench collectives, its mpirun mode,
// sf_mpi_bench, sf_compile_time) and the timing tests go through it, so their
// figures mean the same thing.
//
//   sfbench::TimingOptions o;                       // 3 warm-ups, 7 trials of ~20 ms
//   sfbench::Timing t = sfbench::time_op([&] { work(); }, o);
//   std::printf("median %.2f us (min %.2f, max %.2f)\n", t.median_us(), t.min_us(), t.max_us());
//
// Several ranks: `sync` runs before the warm-ups and before each batch (a
// barrier), `agree` turns one rank's seconds into the value every rank uses
// (the maximum over ranks: a batch lasts as long as its slowest rank), so all
// ranks pick the same repetition count and report the same figures.
// `prepare` runs before each batch, untimed (refilling an in-place buffer).
#pragma once
#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace sfbench {

inline double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Repetitions per batch so that one batch lasts ~`target_s`, within [min_reps, max_reps].
inline int reps_for(double one_op_s, double target_s = 0.02, int min_reps = 3, int max_reps = 20000) {
  if (one_op_s <= 0) return std::min(1000, max_reps);
  return int(std::clamp(target_s / one_op_s, double(min_reps), double(max_reps)));
}

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Median, min and max of samples (seconds), e.g. the phases of a compile.
struct Stats {
  double median = 0, min = 0, max = 0;
  std::vector<double> samples;
};

inline Stats stats_of(std::vector<double> samples) {
  Stats s;
  if (samples.empty()) return s;
  s.median = median(samples);
  s.min = *std::min_element(samples.begin(), samples.end());
  s.max = *std::max_element(samples.begin(), samples.end());
  s.samples = std::move(samples);
  return s;
}

struct TimingOptions {
  int warmups = 3;         // untimed runs first; they also estimate one op
  int trials = 7;          // timed batches (DESIGN.md §7: the median of >= 7)
  double target_s = 0.02;  // length of one batch
  int min_reps = 3, max_reps = 20000;
  std::function<void()> prepare;        // before each batch, untimed
  std::function<void()> sync;           // before the warm-ups and each batch (a barrier)
  std::function<double(double)> agree;  // one rank's seconds -> every rank's (max over ranks)
};

// Per-op seconds of each batch, summarized.
struct Timing : Stats {
  int reps = 0;  // repetitions per batch
  double median_us() const { return median * 1e6; }
  double min_us() const { return min * 1e6; }
  double max_us() const { return max * 1e6; }
};

template <class Op>
Timing time_op(Op&& op, const TimingOptions& o = {}) {
  auto agree = [&](double s) { return o.agree ? o.agree(s) : s; };
  if (o.prepare) o.prepare();
  if (o.sync) o.sync();
  double t0 = now_s();
  for (int i = 0; i < o.warmups; ++i) op();
  const double one = o.warmups > 0 ? agree((now_s() - t0) / o.warmups) : 0;
  Timing t;
  t.reps = o.warmups > 0 ? reps_for(one, o.target_s, o.min_reps, o.max_reps) : o.min_reps;
  std::vector<double> per_op;
  for (int trial = 0; trial < o.trials; ++trial) {
    if (o.prepare) o.prepare();
    if (o.sync) o.sync();
    double s = now_s();
    for (int r = 0; r < t.reps; ++r) op();
    per_op.push_back(agree((now_s() - s) / t.reps));
  }
  static_cast<Stats&>(t) = stats_of(std::move(per_op));
  return t;
}

}  // namespace sfbench
