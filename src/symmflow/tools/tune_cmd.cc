// `symmflow tune`: measures, on this machine, where one-shot all_reduce stops
// beating two-shot, per world size, and stores it in the tuning file that
// compilation reads (passes/collective_lowering.h):
//
//   { "one_shot_max_bytes": { "2": 4096, "3": 2048, "4": 2048 },
//     "measured": { "2": [[bytes, one_shot_us, two_shot_us], ...], ... } }
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <sstream>
#include <fstream>
#include <sys/mman.h>
#include <unistd.h>

#include "symmflow/tools/bench_common.h"
#include "symmflow/passes/collective_lowering.h"
#include "symmflow/runtime/collectives/collectives.h"
#include "symmflow/runtime/launcher.h"
#include "symmflow/runtime/symm.h"
#include "symmflow/runtime/world.h"
#include "symmflow/tools/bench_worker.h"
#include "symmflow/tools/commands.h"

namespace symmflow::tools {
namespace {

struct TuneOptions {
  std::vector<int> nprocs = {2, 3, 4};
  std::string sizes = "256-256K";
  int trials = 5;
  std::string out = passes::tune_file_path();
};

// One world size: rank 0 writes "bytes one_us two_us" lines to fd.
int measure(const TuneOptions& o, int nproc, int fd) {
  runtime::LaunchOptions lo;
  lo.nproc = nproc;
  lo.pin = nproc <= int(sysconf(_SC_NPROCESSORS_ONLN));
  return runtime::launch_fn(lo, [&] {
    dist::init();
    auto& g = dist::world();
    for (int64_t bytes : sfbench::parse_sizes(o.sizes)) {
      Tensor x = symm::empty({bytes / 4}, DType::f32);
      for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = sfbench::input_value(g.rank(), i);
      double one = time_collective_us(g, o.trials, [&] { dist::all_reduce_(g, x, dist::ReduceOp::max, dist::AllReduceAlgo::one_shot); });
      double two = time_collective_us(g, o.trials, [&] { dist::all_reduce_(g, x, dist::ReduceOp::max, dist::AllReduceAlgo::two_shot); });
      if (g.rank() == 0) {
        std::string line = fmt::format("{} {} {}\n", bytes, one, two);
        SF_CHECK(write(fd, line.data(), line.size()) == ssize_t(line.size()), "tune: cannot write the results");
      }
    }
    return 0;
  });
}

int run_tune(const TuneOptions& o) {
  nlohmann::json j;
  if (std::filesystem::exists(o.out)) {
    std::ifstream f(o.out);
    j = nlohmann::json::parse(f, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) j = nlohmann::json::object();
  }
  fmt::print("{:>6} {:>10} {:>12} {:>12}  {}\n", "ranks", "bytes", "one_shot_us", "two_shot_us", "faster");
  for (int n : o.nprocs) {
    int fd = memfd_create("sf-tune", 0);
    if (int rc = measure(o, n, fd); rc != 0) return rc;
    lseek(fd, 0, SEEK_SET);
    std::string text;
    char buf[4096];
    for (ssize_t k; (k = read(fd, buf, sizeof buf)) > 0;) text.append(buf, size_t(k));
    close(fd);
    // The threshold: the largest size up to which one-shot is never slower.
    size_t threshold = 0;
    bool one_still_wins = true;
    std::istringstream lines(text);
    nlohmann::json points = nlohmann::json::array();
    for (int64_t bytes; lines >> bytes;) {
      double one, two;
      lines >> one >> two;
      points.push_back({bytes, one, two});
      one_still_wins &= one <= two;
      if (one_still_wins) threshold = size_t(bytes);
      fmt::print("{:>6} {:>10} {:>12.2f} {:>12.2f}  {}\n", n, sfbench::format_bytes(bytes), one, two,
                 one <= two ? "one_shot" : "two_shot");
    }
    j["one_shot_max_bytes"][std::to_string(n)] = threshold;
    j["measured"][std::to_string(n)] = points;
    fmt::print("{:>6} ranks: one_shot up to {} bytes\n", n, threshold);
  }
  std::filesystem::create_directories(std::filesystem::path(o.out).parent_path());
  std::ofstream f(o.out);
  f << j.dump(2) << "\n";
  SF_CHECK(f.good(), "tune: cannot write {}", o.out);
  fmt::print("wrote {} (compilation uses it: SYMMFLOW_TUNE_FILE overrides the path)\n", o.out);
  return 0;
}

}  // namespace

void add_tune_command(CLI::App& app) {
  auto o = std::make_shared<TuneOptions>();
  auto* cmd = app.add_subcommand(
      "tune", "Measure the one-shot/two-shot all_reduce crossover on this machine and store it for the compiler");
  cmd->add_option("--nproc", o->nprocs, "World sizes to measure (default 2 3 4)")->check(rank_count(2));
  cmd->add_option("--sizes", o->sizes, "Message sizes: a range of powers of two (256-256K) or a list");
  cmd->add_option("--trials", o->trials, "Trials per measurement (median)")->check(CLI::Range(1, 1000));
  cmd->add_option("--out", o->out, "The tuning file (default $SYMMFLOW_TUNE_FILE or ~/.cache/symmflow/tune.json)");
  cmd->callback([o] { throw CLI::RuntimeError(run_tune(*o)); });
}

}  // namespace symmflow::tools
