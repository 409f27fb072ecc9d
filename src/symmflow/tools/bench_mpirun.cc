// `symmflow bench collectives` under mpirun (bench_mpirun.h): symmflow's
// all_reduce_ (f32 sum, in place on a symmetric tensor, dist::world(); a group
// spanning nodes runs the hierarchical algorithm) against MPI_Allreduce
// (MPI_IN_PLACE, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD) in the same processes, per
// size in the order MPI, symmflow, MPI again.
//
// Timing is bench_worker's (and sf_mpi_bench's): 3 warm-ups, then `trials`
// batches of enough repetitions for ~20 ms, a barrier before each batch (the
// side's own: ProcessGroup::barrier for symmflow, MPI_Barrier for MPI), a
// batch's time per op is the slowest rank's; the median batch is reported. The
// in-place buffer is refilled before each batch (outside the timed region).
//
// Verification, before anything is timed (a wrong result fails every rank):
//  - integer-valued inputs (sfbench::input_value): symmflow's result must equal
//    the rank-order reference bit for bit; MPI's (unspecified order) and
//    symmflow's vs MPI's must agree within a rounding tolerance;
//  - non-integer inputs: symmflow's result must still equal the rank-order
//    fold ((x0 + x1) + x2) + ... bit for bit (its determinism contract); MPI's
//    must be within the tolerance of it.
#include "symmflow/tools/bench_mpirun.h"

#include "symmflow/core/error.h"

#if !SYMMFLOW_HAVE_MPI

namespace symmflow::tools {

int run_bench_mpirun(const MpirunBenchOptions&) {
  fail("bench collectives: started by mpirun, but this symmflow was built without MPI (CMake did not find "
       "MPI: install libopenmpi-dev and openmpi-bin, then reconfigure); without MPI, run "
       "`symmflow bench collectives --nproc N` without mpirun");
}

}  // namespace symmflow::tools

#else

#include <fmt/format.h>
#include <mpi.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <vector>

#include "symmflow/tools/bench_common.h"
#include "symmflow/core/params.h"
#include "symmflow/runtime/collectives/collectives.h"
#include "symmflow/runtime/symm.h"
#include "symmflow/runtime/world.h"
#include "symmflow/tools/bench_records.h"

namespace symmflow::tools {
namespace {

double max_over_ranks_mpi(double v) {
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return v;
}

// Median over trials of the slowest rank's time per op, in microseconds.
// `prepare` runs before each batch's barrier, untimed.
double time_op(int trials, const std::function<void()>& barrier, const std::function<void()>& prepare,
               const std::function<void()>& op) {
  sfbench::TimingOptions to;
  to.trials = trials;
  to.prepare = prepare;
  to.sync = barrier;
  to.agree = max_over_ranks_mpi;
  return sfbench::time_op(op, to).median_us();
}

// Non-integer inputs for the order check: not exactly representable sums.
float frac_value(int rank, int64_t i) { return sfbench::input_value(rank, i) * 0.1f + float(rank + 1) * 1e-3f; }

struct Topology {
  int world = 0, nodes = 0;
  std::vector<std::vector<int>> ranks_of_node;
  std::vector<std::string> host_of_node;  // distinct host names of the node's ranks
};

Topology gather_topology() {
  Topology t;
  auto& be = dist::backend();
  t.world = be.size();
  t.nodes = be.num_nodes();
  t.ranks_of_node.resize(size_t(t.nodes));
  for (int r = 0; r < t.world; ++r) t.ranks_of_node[size_t(be.node_of(r))].push_back(r);
  char mine[256] = {};
  gethostname(mine, sizeof mine - 1);
  std::vector<char> all(size_t(t.world) * sizeof mine);
  MPI_Allgather(mine, sizeof mine, MPI_CHAR, all.data(), sizeof mine, MPI_CHAR, MPI_COMM_WORLD);
  t.host_of_node.resize(size_t(t.nodes));
  for (int n = 0; n < t.nodes; ++n) {
    std::vector<std::string> hs;
    for (int r : t.ranks_of_node[size_t(n)]) {
      std::string h(&all[size_t(r) * sizeof mine]);
      if (std::find(hs.begin(), hs.end(), h) == hs.end()) hs.push_back(h);
    }
    t.host_of_node[size_t(n)] = fmt::format("{}", fmt::join(hs, "+"));
  }
  return t;
}

std::string ranks_per_node(const Topology& t) {
  std::vector<size_t> c;
  for (const auto& rs : t.ranks_of_node) c.push_back(rs.size());
  if (std::all_of(c.begin(), c.end(), [&](size_t k) { return k == c[0]; })) return std::to_string(c[0]);
  return fmt::format("{}", fmt::join(c, ","));
}

std::string rank_range(const std::vector<int>& rs) {
  bool consecutive = true;
  for (size_t i = 1; i < rs.size(); ++i) consecutive &= rs[i] == rs[i - 1] + 1;
  if (rs.size() > 1 && consecutive) return fmt::format("{}-{}", rs.front(), rs.back());
  return fmt::format("{}", fmt::join(rs, ","));
}

// Verification: every rank checks, then all agree; the ranks that found a
// problem print it, and every rank fails with the same Error.
class Verifier {
 public:
  explicit Verifier(int rank) : rank_(rank) {}
  void check(bool ok, const std::function<std::string()>& what) {
    if (!ok && problem_.empty()) problem_ = what();
  }
  void agree(const std::string& stage) {
    int bad = problem_.empty() ? 0 : 1;
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (!problem_.empty()) std::fprintf(stderr, "bench: rank %d: %s\n", rank_, problem_.c_str());
    std::fflush(stderr);
    if (bad) fail("bench collectives (mpirun): a wrong result in {} (see the ranks' messages); nothing was timed "
                  "for this size", stage);
  }

 private:
  int rank_;
  std::string problem_;
};

// First element where `got` differs from `want` bitwise, or -1.
int64_t first_bit_mismatch(const float* got, const float* want, int64_t n) {
  if (std::memcmp(got, want, size_t(n) * 4) == 0) return -1;
  for (int64_t i = 0; i < n; ++i)
    if (std::memcmp(&got[i], &want[i], 4) != 0) return i;
  return -1;
}

// First element where |got - want| > tol[i], or -1.
int64_t first_tol_mismatch(const float* got, const float* want, const std::vector<float>& tol, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    if (!(std::fabs(double(got[i]) - double(want[i])) <= double(tol[size_t(i)]))) return i;
  return -1;
}

}  // namespace

int run_bench_mpirun(const MpirunBenchOptions& o) {
  dist::init();  // the mpi backend: MPI is initialized from here on
  dist::ProcessGroup& g = dist::world();
  const int W = g.size(), me = g.rank();
  int mpi_world = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &mpi_world);
  SF_CHECK(mpi_world == W, "bench: MPI_COMM_WORLD has {} ranks, symmflow's world {}", mpi_world, W);
  const std::vector<int64_t> sizes = sfbench::parse_sizes(o.sizes);
  const Topology topo = gather_topology();
  const std::string chunk = params::is_set("SYMMFLOW_NET_CHUNK_BYTES")
                                ? params::raw("SYMMFLOW_NET_CHUNK_BYTES")
                                : params::spec("SYMMFLOW_NET_CHUNK_BYTES").dflt + std::string(" (default)");

  if (me == 0) {
    fmt::print("symmflow bench collectives under mpirun: all_reduce f32 sum, in place, world of {} ranks\n", W);
    fmt::print("world size {}, {} node(s), {} rank(s) per node, backend {}, SYMMFLOW_NET_CHUNK_BYTES {}\n", W,
               topo.nodes, ranks_per_node(topo), dist::backend().name(), chunk);
    for (int n = 0; n < topo.nodes; ++n)
      fmt::print("  node {}: rank{} {} on host {}\n", n, topo.ranks_of_node[size_t(n)].size() > 1 ? "s" : "",
                 rank_range(topo.ranks_of_node[size_t(n)]),
                 topo.host_of_node[size_t(n)]);
    fmt::print("{:>9} {:>12} {:>21} {:>7} {:<13}\n", "bytes", "symmflow_us", "MPI_us (before/after)", "ratio",
               "algo");
    std::fflush(stdout);
  }

  std::vector<BenchRecord> records;
  auto record = [&](const std::string& impl, int64_t bytes, double us) {
    BenchRecord r;
    r.op = "all_reduce";
    r.impl = impl;
    r.nproc = W;
    r.nodes = topo.nodes;
    r.bytes = bytes;
    r.median_us = us;
    r.algbw_gbps = us > 0 ? double(bytes) / (us * 1e3) : 0.0;
    records.push_back(r);
  };

  Verifier v(me);
  for (int64_t req : sizes) {
    const int64_t n = std::max<int64_t>(req / 4 / W * W, W);  // f32 elements, a multiple of W (bench_worker's rule)
    const int64_t bytes = n * 4;
    SF_CHECK(n <= INT32_MAX, "bench: {} bytes is too large for one MPI_Allreduce count", bytes);
    const size_t un = size_t(n);
    std::vector<float> ref(un), tol(un), fref(un), ftol(un);
    for (int64_t i = 0; i < n; ++i) {
      float s = 0, fs = 0, a = 0, fa = 0;
      for (int r = 0; r < W; ++r) {
        s += sfbench::input_value(r, i);
        a += std::fabs(sfbench::input_value(r, i));
        fs += frac_value(r, i);  // the rank-order fold, one rounding per step
        fa += std::fabs(frac_value(r, i));
      }
      ref[size_t(i)] = s, fref[size_t(i)] = fs;
      // Any summation order of W terms is within (W - 1) ulp-units of sum |x|.
      tol[size_t(i)] = float(W) * 0x1p-23f * a;
      ftol[size_t(i)] = float(W) * 0x1p-23f * fa * 2;
    }
    Tensor x = symm::empty({n}, DType::f32, g);  // collective allocation
    float* xp = x.data<float>();
    std::vector<float> mbuf(un);
    auto fill_sf = [&] { for (int64_t i = 0; i < n; ++i) xp[i] = sfbench::input_value(me, i); };
    auto fill_mpi = [&] { for (int64_t i = 0; i < n; ++i) mbuf[size_t(i)] = sfbench::input_value(me, i); };
    auto mpi_op = [&] { MPI_Allreduce(MPI_IN_PLACE, mbuf.data(), int(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); };
    auto sf_op = [&] { return dist::all_reduce_(g, x, dist::ReduceOp::sum); };

    // --- verify: integer inputs ---
    fill_sf();
    const dist::CollectiveResult res = sf_op();
    fill_mpi();
    mpi_op();
    int64_t bad = first_bit_mismatch(xp, ref.data(), n);
    v.check(bad < 0, [&] {
      return fmt::format("symmflow all_reduce_ ({} bytes, {}) differs from the rank-order reference at element {}: "
                         "got {}, expected {}", bytes, dist::algo_name(res.algo), bad, xp[bad], ref[size_t(bad)]);
    });
    bad = first_tol_mismatch(mbuf.data(), ref.data(), tol, n);
    v.check(bad < 0, [&] {
      return fmt::format("MPI_Allreduce ({} bytes) differs from the reference at element {}: got {}, expected {}",
                         bytes, bad, mbuf[size_t(bad)], ref[size_t(bad)]);
    });
    bad = first_tol_mismatch(xp, mbuf.data(), tol, n);
    v.check(bad < 0, [&] {
      return fmt::format("symmflow and MPI disagree ({} bytes) at element {}: {} vs {}", bytes, bad, xp[bad],
                         mbuf[size_t(bad)]);
    });
    if (topo.nodes > 1)
      v.check(res.algo == dist::AllReduceAlgo::hierarchical, [&] {
        return fmt::format("a world on {} nodes ran all_reduce_ as {}, expected hierarchical", topo.nodes,
                           dist::algo_name(res.algo));
      });
    // --- verify: non-integer inputs (order matters) ---
    for (int64_t i = 0; i < n; ++i) xp[i] = mbuf[size_t(i)] = frac_value(me, i);
    sf_op();
    mpi_op();
    bad = first_bit_mismatch(xp, fref.data(), n);
    v.check(bad < 0, [&] {
      return fmt::format("symmflow all_reduce_ ({} bytes, non-integer inputs) is not the rank-order fold at element "
                         "{}: got {:.9g}, expected {:.9g}", bytes, bad, xp[bad], fref[size_t(bad)]);
    });
    bad = first_tol_mismatch(mbuf.data(), fref.data(), ftol, n);
    v.check(bad < 0, [&] {
      return fmt::format("MPI_Allreduce ({} bytes, non-integer inputs) is off at element {}: got {:.9g}, "
                         "expected {:.9g}", bytes, bad, mbuf[size_t(bad)], fref[size_t(bad)]);
    });
    v.agree(fmt::format("the {}-byte all_reduce", bytes));

    // --- time: MPI, symmflow, MPI again ---
    auto mpi_barrier = [] { MPI_Barrier(MPI_COMM_WORLD); };
    auto sf_barrier = [&] { g.barrier("bench trial"); };
    const double mpi0 = time_op(o.trials, mpi_barrier, fill_mpi, mpi_op);
    const double sf = time_op(o.trials, sf_barrier, fill_sf, [&] { sf_op(); });
    const double mpi1 = time_op(o.trials, mpi_barrier, fill_mpi, mpi_op);
    const std::string algo(dist::algo_name(res.algo));
    record(algo, bytes, sf);
    record("mpi", bytes, mpi0);
    record("mpi_after", bytes, mpi1);
    if (me == 0) {
      const double mpi = 0.5 * (mpi0 + mpi1);
      fmt::print("{:>9} {:>12.2f} {:>21} {:>7.2f} {:<13}\n", sfbench::format_bytes(bytes), sf,
                 fmt::format("{:.2f}/{:.2f}", mpi0, mpi1), sf / mpi, algo);
      std::fflush(stdout);
    }
  }
  if (me == 0) {
    fmt::print("ratio = symmflow time / mean of MPI's before and after (lower is better). Each time: median of {} "
               "batches of ~20 ms (>= 3 reps) after 3 warm-ups, a barrier before each batch (symmflow: its group "
               "barrier, MPI: MPI_Barrier), a batch's time per op = the slowest rank's. Results verified before "
               "timing.\n",
               o.trials);
    if (!o.json.empty()) {
      std::ofstream(o.json) << records_to_json(records);
      fmt::print("wrote {}\n", o.json);
    }
    if (!o.plot.empty()) {
      std::ofstream(o.plot) << latency_plot_svg(
          records, fmt::format("all_reduce, symmflow vs MPI_Allreduce: {} ranks on {} nodes", W, topo.nodes));
      fmt::print("wrote {}\n", o.plot);
    }
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace symmflow::tools

#endif  // SYMMFLOW_HAVE_MPI
