// Tuning aid, not a test of speed (timing is never asserted): all_reduce
// latency and bandwidth at 2 pinned ranks, beside the memcpy bound, median of 7
// trials. Run with
//   runtime_tests --gtest_also_run_disabled_tests --gtest_filter='*CollPerf*'
// SF_PERF_SIZES (bytes, comma separated) and SF_PERF_NPROC override the defaults.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "symmflow/core/error.h"
#include "symmflow/runtime/collectives/collectives.h"
#include "symmflow/runtime/symm.h"
#include "symmflow/runtime/test_util.h"
#include "symmflow/runtime/world.h"

namespace symmflow::dist {
namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::vector<int64_t> perf_sizes() {
  std::vector<int64_t> v;
  std::string s = std::getenv("SF_PERF_SIZES") ? std::getenv("SF_PERF_SIZES")
                                              : "1024,4096,65536,262144,1048576,4194304,16777216";
  size_t pos = 0;
  while (pos < s.size()) {
    size_t c = s.find(',', pos);
    if (c == std::string::npos) c = s.size();
    v.push_back(std::stoll(s.substr(pos, c - pos)));
    pos = c + 1;
  }
  return v;
}

// Median over 7 trials of the per-op time in microseconds (rank 0's clock,
// every trial starts after a barrier and ends with a collective).
template <class F>
double time_op(ProcessGroup& g, F&& op) {
  for (int i = 0; i < 3; ++i) op();
  g.barrier("perf");
  double t0 = now();
  for (int i = 0; i < 5; ++i) op();
  // Every rank must run the same number of ops: agree on the slowest estimate.
  Tensor e = symm::empty({1}, DType::f64, g);
  e.data<double>()[0] = (now() - t0) / 5;
  all_reduce_(g, e, ReduceOp::max);
  double est = e.data<double>()[0];
  int reps = int(std::clamp(0.02 / std::max(est, 1e-9), 3.0, 20000.0));
  std::vector<double> us;
  for (int t = 0; t < 7; ++t) {
    g.barrier("perf");
    double s = now();
    for (int i = 0; i < reps; ++i) op();
    us.push_back((now() - s) / reps * 1e6);
  }
  std::sort(us.begin(), us.end());
  return us[3];
}

TEST(CollPerf, DISABLED_AllReduceLatencyAndBandwidth) {
  int nproc = std::getenv("SF_PERF_NPROC") ? std::atoi(std::getenv("SF_PERF_NPROC")) : 2;
  auto r = runtime::testing::run_job(nproc, [] {
    init();
    auto& g = world();
    {  // the floor: a bare signal exchange with every peer (channel 5, unused)
      std::vector<uint64_t> seen(size_t(g.size()), 0);
      double ex = time_op(g, [&] {
        for (int p = 0; p < g.size(); ++p)
          if (p != g.rank()) g.signals().signal(p, 5);
        for (int p = 0; p < g.size(); ++p)
          if (p != g.rank()) g.signals().wait_signal(p, 5, ++seen[size_t(p)], "exchange");
      });
      Tensor one = symm::empty({1}, DType::f32);
      double ar = time_op(g, [&] { all_reduce_(g, one, ReduceOp::sum); });
      if (g.rank() == 0) std::printf("bare signal exchange %.3f us, all_reduce_ of 4 bytes %.3f us\n", ex, ar);
    }
    for (int64_t bytes : perf_sizes()) {
      const int64_t n = bytes / 4;
      Tensor t = symm::empty({n}, DType::f32), in = symm::empty({n}, DType::f32),
             out = symm::empty({n}, DType::f32);
      for (int64_t i = 0; i < n; ++i) t.data<float>()[i] = in.data<float>()[i] = float(i % 17 - 8);
      std::vector<char> a(static_cast<size_t>(bytes)), b(static_cast<size_t>(bytes));
      std::memset(a.data(), 1, a.size());
      std::memset(b.data(), 2, b.size());
      double mc = time_op(g, [&] { std::memcpy(b.data(), a.data(), a.size()); });
      double one = time_op(g, [&] { all_reduce_(g, t, ReduceOp::sum, AllReduceAlgo::one_shot); });
      double two = time_op(g, [&] { all_reduce_(g, t, ReduceOp::sum, AllReduceAlgo::two_shot); });
      double oop1 = time_op(g, [&] { all_reduce(g, out, in, ReduceOp::sum, AllReduceAlgo::one_shot); });
      double oop2 = time_op(g, [&] { all_reduce(g, out, in, ReduceOp::sum, AllReduceAlgo::two_shot); });
      double autom = time_op(g, [&] { all_reduce_(g, t, ReduceOp::sum); });
      // What `symmflow bench collectives` times: symmetric in, regular out.
      Tensor reg = Tensor::empty({n}, DType::f32);
      double r1 = time_op(g, [&] { all_reduce(g, reg, in, ReduceOp::sum, AllReduceAlgo::one_shot); });
      double r2 = time_op(g, [&] { all_reduce(g, reg, in, ReduceOp::sum, AllReduceAlgo::two_shot); });
      auto gbps = [&](double us) { return double(bytes) / (us * 1e3); };
      // all_gather of `bytes` per rank into W x bytes; reduce_scatter of bytes into bytes / W.
      Tensor gat = symm::empty({n * g.size()}, DType::f32, g), rs = symm::empty({n / g.size()}, DType::f32, g);
      double ag = time_op(g, [&] { all_gather(g, gat, in); });
      double rsc = time_op(g, [&] { reduce_scatter(g, rs, in, ReduceOp::sum); });
      if (g.rank() == 0)
        std::printf("%9lld B  memcpy %8.2f us %6.2f GB/s | in place: one-shot %8.2f us %6.2f GB/s, "
                    "two-shot %8.2f us %6.2f GB/s, auto %8.2f us | out of place: one %8.2f us "
                    "%6.2f GB/s, two %8.2f us %6.2f GB/s\n",
                    (long long)bytes, mc, gbps(mc), one, gbps(one), two, gbps(two), autom, oop1,
                    gbps(oop1), oop2, gbps(oop2));
      if (g.rank() == 0)
        std::printf("%9lld B  into a regular out: one-shot %8.2f us %6.2f GB/s, two-shot %8.2f us %6.2f GB/s\n",
                    (long long)bytes, r1, gbps(r1), r2, gbps(r2));
      if (g.rank() == 0)
        std::printf("%9lld B  all_gather %8.2f us %6.2f GB/s | reduce_scatter %8.2f us %6.2f GB/s\n",
                    (long long)bytes, ag, gbps(ag), rsc, gbps(rsc));
      std::fflush(stdout);
    }
    return 0;
  }, [](runtime::LaunchOptions& o) {
    o.pin = true;
    o.env = {{"SYMMFLOW_SYMM_HEAP_BYTES", "512M"}, {"SYMMFLOW_TIMEOUT", "60"}};
  });
  SF_EXPECT_JOB_OK(r);
  std::printf("%s", r.out.c_str());
}

}  // namespace
}  // namespace symmflow::dist
