// `symmflow bench collectives`: symmflow's collectives against MPI's and against
// the memory-bandwidth bound, side by side in one run: MPI first, then symmflow's
// ranks (through the launcher, pinned when ranks <= CPUs), then MPI again, so a
// noisy machine shows up as a before/after difference instead of a wrong ratio.
//
// Under mpirun (dist::launched_by_mpi()) the command spawns nothing: every
// process is one rank and all_reduce is compared with MPI_Allreduce in the same
// processes (bench_mpirun.h).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <unistd.h>

#include "symmflow/core/error.h"
#include "symmflow/runtime/launcher.h"
#include "symmflow/runtime/net/mpi_backend.h"
#include "symmflow/tools/bench_mpirun.h"
#include "symmflow/tools/bench_records.h"
#include "symmflow/tools/bench_worker.h"
#include "symmflow/tools/commands.h"

namespace symmflow::tools {
namespace {

struct BenchOptions {
  int nproc = 2;
  BenchWorkerOptions worker;
  std::string json, plot;
  bool no_mpi = false;
  bool is_worker = false;
  // Given on the command line (mpirun mode checks what applies there).
  bool nproc_given = false, sizes_given = false, ops_given = false;
};

std::string self_dir() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  SF_CHECK(n > 0, "bench: cannot read /proc/self/exe");
  std::string p(buf, size_t(n));
  return p.substr(0, p.rfind('/'));
}

std::string run_capture(const std::string& cmd, int* rc) {
  FILE* p = popen(cmd.c_str(), "r");
  SF_CHECK(p != nullptr, "bench: cannot run {}", cmd);
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int st = pclose(p);
  *rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return out;
}

// The MPI baseline, or an empty list (with the reason on stderr) when it cannot run.
std::vector<BenchRecord> run_mpi(const BenchOptions& o, const std::string& when) {
  std::string exe = self_dir() + "/sf_mpi_bench";
  if (o.no_mpi) return {};
  if (access(exe.c_str(), X_OK) != 0 || system("command -v mpirun > /dev/null 2>&1") != 0) {
    fmt::print(stderr, "bench: MPI baseline not available (needs mpirun and {}: build with libopenmpi-dev)\n", exe);
    return {};
  }
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  std::string bind = o.nproc <= cpus ? "--bind-to core --map-by core" : "--oversubscribe --bind-to none";
  std::string root = getuid() == 0 ? "--allow-run-as-root" : "";
  std::string cmd = fmt::format("mpirun {} -np {} {} {} --sizes '{}' --trials {} --ops '{}' 2>&1", root, o.nproc, bind,
                                exe, o.worker.sizes, o.worker.trials, o.worker.ops);
  int rc = 0;
  std::string out = run_capture(cmd, &rc);
  SF_CHECK(rc == 0, "bench: the MPI baseline ({}) failed with status {}:\n{}", when, rc, out);
  auto rs = parse_records(out);
  for (auto& r : rs) r.impl = when == "before" ? "mpi" : "mpi_after";
  return rs;
}

std::vector<BenchRecord> run_symmflow(const BenchOptions& o) {
  char path[] = "/tmp/symmflow-bench-XXXXXX";
  int fd = mkstemp(path);
  SF_CHECK(fd >= 0, "bench: cannot create a temporary file");
  unlink(path);
  runtime::LaunchOptions lo;
  lo.nproc = o.nproc;
  lo.prefix_output = false;
  lo.pin = o.nproc <= sysconf(_SC_NPROCESSORS_ONLN);
  lo.out_fd = fd;
  lo.argv = {self_dir() + "/symmflow", "bench", "collectives", "--worker", "--sizes", o.worker.sizes,
             "--trials", std::to_string(o.worker.trials), "--ops", o.worker.ops};
  int rc = runtime::launch(lo);
  std::string out;
  lseek(fd, 0, SEEK_SET);
  char buf[4096];
  while (ssize_t n = read(fd, buf, sizeof buf)) {
    if (n < 0) break;
    out.append(buf, size_t(n));
  }
  close(fd);
  SF_CHECK(rc == 0, "bench: symmflow's ranks failed with status {} (a wrong result is a failure):\n{}", rc, out);
  return parse_records(out);
}

// Bytes of memory traffic each algorithm needs per rank for an N-byte all_reduce
// on W ranks (reads + writes; a peer's memory is the same DRAM here):
//   one-shot: read W inputs, write 1 output          -> (W + 1) N
//   two-shot: reduce own chunk (read N, write N/W), gather W-1 chunks
//             (read and write (W-1) N / W)           -> N + N/W + 2 (W-1) N / W
// memcpy moves 2 N for N copied, so the bound time is traffic / (2 * memcpy rate).
double bound_us(const BenchRecord& r, double memcpy_gbps) {
  if (memcpy_gbps <= 0 || r.op != "all_reduce") return 0;
  double n = double(r.bytes), w = r.nproc;
  double traffic = r.impl == "two_shot" ? n + n / w + 2 * (w - 1) * n / w : (w + 1) * n;
  return traffic / (2 * memcpy_gbps * 1e3);
}

void print_table(const std::vector<BenchRecord>& rs) {
  std::map<std::tuple<std::string, long long, std::string>, const BenchRecord*> by;
  std::map<long long, double> memcpy_gbps;
  std::set<std::pair<std::string, long long>> rows;
  for (const auto& r : rs) {
    if (r.op == "memcpy") {
      memcpy_gbps[r.bytes] = r.algbw_gbps;
      continue;
    }
    by[{r.op, r.bytes, r.impl}] = &r;
    rows.insert({r.op, r.bytes});
  }
  fmt::print("{:<15} {:>7} {:<9} {:>11} {:>10} {:>19} {:>9} {:>8}\n", "op", "bytes", "impl", "median_us",
             "algbw_GB/s", "MPI us (bef/aft)", "x MPI", "bound%");
  for (const auto& [op, bytes] : rows) {
    const BenchRecord* m0 = by.count({op, bytes, "mpi"}) ? by[{op, bytes, "mpi"}] : nullptr;
    const BenchRecord* m1 = by.count({op, bytes, "mpi_after"}) ? by[{op, bytes, "mpi_after"}] : nullptr;
    double mpi = m0 && m1 ? 0.5 * (m0->median_us + m1->median_us) : m0 ? m0->median_us : 0;
    for (const auto& [key, r] : by) {
      if (std::get<0>(key) != op || std::get<1>(key) != bytes) continue;
      if (r->impl.rfind("mpi", 0) == 0) continue;
      std::string mpis = m0 ? fmt::format("{:.2f}/{:.2f}", m0->median_us, m1 ? m1->median_us : 0.0) : "-";
      std::string ratio = mpi > 0 ? fmt::format("{:.2f}", r->median_us / mpi) : "-";
      double b = bound_us(*r, memcpy_gbps.count(bytes) ? memcpy_gbps[bytes] : 0);
      std::string bound = b > 0 ? fmt::format("{:.0f}", 100 * b / r->median_us) : "-";
      fmt::print("{:<15} {:>7} {:<9} {:>11.2f} {:>10.2f} {:>19} {:>9} {:>8}\n", op, bytes, r->impl, r->median_us,
                 r->algbw_gbps, mpis, ratio, bound);
    }
  }
  for (const auto& [bytes, gbps] : memcpy_gbps)
    fmt::print("memcpy bound    {:>7} {:.2f} GB/s per rank with every rank copying\n", bytes, gbps);
  fmt::print("x MPI = symmflow time / mean of MPI's before and after (lower is better); bound% = the\n"
             "memory-traffic bound time / measured time (see docs/performance.md).\n");
}

// mpirun mode: this process is one rank; the world is mpirun's.
int run_bench_under_mpirun(const BenchOptions& o) {
  SF_CHECK(!o.nproc_given, "bench collectives: --nproc does not apply under mpirun (the world is mpirun's -np)");
  SF_CHECK(!o.no_mpi, "bench collectives: --no-mpi does not apply under mpirun (the point is the comparison)");
  SF_CHECK(!o.ops_given || o.worker.ops == "all_reduce",
           "bench collectives: under mpirun only all_reduce is measured (--ops all_reduce), not '{}'", o.worker.ops);
  MpirunBenchOptions m;
  if (o.sizes_given) m.sizes = o.worker.sizes;
  m.trials = o.worker.trials;
  m.json = o.json;
  m.plot = o.plot;
  return run_bench_mpirun(m);
}

int run_bench(const BenchOptions& o) {
  if (o.is_worker) return run_bench_worker(o.worker);
  if (dist::launched_by_mpi()) return run_bench_under_mpirun(o);
  std::vector<BenchRecord> all;
  auto add = [&](std::vector<BenchRecord> rs) { all.insert(all.end(), rs.begin(), rs.end()); };
  add(run_mpi(o, "before"));
  add(run_symmflow(o));
  add(run_mpi(o, "after"));
  print_table(all);
  if (!o.json.empty()) {
    std::ofstream(o.json) << records_to_json(all);
    fmt::print("wrote {}\n", o.json);
  }
  if (!o.plot.empty()) {
    std::ofstream(o.plot) << latency_plot_svg(
        all, fmt::format("symmflow vs MPI, {} ranks: median latency", o.nproc));
    fmt::print("wrote {}\n", o.plot);
  }
  return 0;
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto* bench = app.add_subcommand("bench", "Benchmarks");
  bench->require_subcommand(1);
  auto o = std::make_shared<BenchOptions>();
  auto* cmd = bench->add_subcommand(
      "collectives",
      "Time symmflow's collectives and P2P against MPI (same run, before and after) and the memcpy "
      "bound; every result is verified before it is timed");
  auto* nproc = cmd->add_option("--nproc,-n", o->nproc, "Number of ranks (not under mpirun)")
                    ->check(rank_count())
                    ->capture_default_str();
  auto* sizes = cmd->add_option("--sizes", o->worker.sizes,
                                "Sizes: a range of powers of two (1K-64M), a list (1K,4K,4M) or one size "
                                "(under mpirun the default is " + MpirunBenchOptions{}.sizes + ")")
                    ->capture_default_str();
  auto* ops = cmd->add_option("--ops", o->worker.ops, "Ops to run (comma list; also column_halo, not run by default; under mpirun: all_reduce only)")
                  ->capture_default_str();
  cmd->add_option("--trials", o->worker.trials, "Trials per measurement (the median is reported)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--json", o->json, "Write every record as a JSON list to FILE");
  cmd->add_option("--plot", o->plot, "Write a log-log latency plot to FILE.svg");
  cmd->add_flag("--no-mpi", o->no_mpi, "Skip the MPI baseline");
  cmd->add_flag("--worker", o->is_worker, "(internal) run as one rank under the launcher")->group("");
  cmd->footer(
      "Under mpirun: `mpirun -np 4 [-x SYMMFLOW_RANKS_PER_NODE=2] symmflow bench collectives [--sizes S] "
      "[--trials N] [--json F] [--plot F.svg]`\n"
      "runs as one rank per process on the mpi backend (nothing is spawned; --nproc and --no-mpi do not apply): "
      "for each size, MPI_Allreduce (MPI_IN_PLACE, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD), symmflow's in-place "
      "all_reduce_ on dist::world() (hierarchical when the ranks span nodes) and MPI_Allreduce again, in the same "
      "processes on the same sizes, results verified first. Rank 0 prints the world, its nodes and their hosts, "
      "and per size: symmflow us, MPI us (before/after), ratio (symmflow / MPI) and the algorithm. "
      "SYMMFLOW_RANKS_PER_NODE=k simulates nodes of k consecutive ranks; SYMMFLOW_NET_CHUNK_BYTES sets the "
      "pipeline chunk between nodes. Needs a build with MPI.");
  cmd->callback([o, nproc, sizes, ops] {
    o->nproc_given = nproc->count() > 0;
    o->sizes_given = sizes->count() > 0;
    o->ops_given = ops->count() > 0;
    throw CLI::RuntimeError(run_bench(*o));
  });
}

}  // namespace symmflow::tools
