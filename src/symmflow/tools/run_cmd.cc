// `symmflow run FILE.sf --nproc N [--check] [--mode ...] ...`: runs a .sf program
// on N ranks (eager, compiled, or both and compared bitwise), DESIGN.md §5.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "symmflow/frontend/program_runner.h"
#include "symmflow/ir/parser.h"
#include "symmflow/ir/printer.h"
#include "symmflow/library/plugin.h"
#include "symmflow/passes/pipeline.h"
#include "symmflow/passes/race_check.h"
#include "symmflow/runtime/collectives/collectives.h"
#include "symmflow/runtime/launcher.h"
#include "symmflow/runtime/world.h"
#include "symmflow/tools/commands.h"
#include "symmflow/tools/ir_dump.h"
#include "symmflow/tools/run_summary.h"

namespace symmflow::tools {
namespace {

struct RunOptions {
  std::string file;
  int nproc = 1;
  bool check = false;
  std::string mode = "compiled";
  int iters = 1;
  bool iters_given = false;
  bool quiet = false;
  bool explain = false;
  std::string dump_ir;
  std::string json;
  uint64_t seed = 0;
  std::string inputs;
  std::string save;
  double timeout = 0;
  std::vector<std::string> loads;
  std::string stop_after;
  bool no_placement = false;
  bool symmetric_inputs = false;
  std::vector<std::string> hints;
  ScheduleFlags schedule;
  std::string trace;
  // Simulated link (runtime/sim_link.h): < 0 = not given (the environment's value stays).
  double sim_link_latency_us = -1;
  double sim_link_gbps = -1;
};

frontend::RunMode mode_of(const RunOptions& o) {
  if (o.check) return frontend::RunMode::check;
  if (o.mode == "eager") return frontend::RunMode::eager;
  if (o.mode == "both") return frontend::RunMode::both;
  return frontend::RunMode::compiled;
}

// `by_rank`: every rank's compiled copies as "count bytes" (ranks that run
// different code copy different things; the report's other fields are rank 0's).
nlohmann::json report_json(const frontend::RankReport& r, frontend::RunMode mode, bool all_match, int iters,
                           const std::vector<std::string>& by_rank) {
  nlohmann::json j;
  j["check"] = r.compared ? nlohmann::json(all_match ? "ok" : "mismatch") : nlohmann::json(nullptr);
  const int64_t runs = std::max(1, iters);
  // The last compiled run's copies (exec/copy_report.h, what --explain counts):
  // totals, per origin, and each copy.
  const exec::CopyReport& c = r.stats.copies;
  j["copies"] = {{"count", c.count()}, {"bytes", c.bytes()}, {"entries", nlohmann::json::array()}};
  for (exec::CopyOrigin o : exec::kCopyOrigins)
    j["copies"][std::string(exec::origin_name(o))] = {{"count", c.count(o)}, {"bytes", c.bytes(o)}};
  for (const auto& e : c.entries)
    j["copies"]["entries"].push_back({{"origin", exec::origin_name(e.origin)}, {"value", e.value}, {"why", e.why},
                                      {"line", e.loc.line}, {"col", e.loc.col}, {"count", e.count},
                                      {"bytes", e.bytes}});
  j["copies_by_rank"] = nlohmann::json::array();
  for (const auto& text : by_rank) {
    int64_t count = 0, bytes = 0;
    std::istringstream(text) >> count >> bytes;
    j["copies_by_rank"].push_back({{"count", count}, {"bytes", bytes}});
  }
  j["eager_copies"] = {{"count", int64_t(r.eager_staged_copies) / runs},
                       {"bytes", int64_t(r.eager_staged_copy_bytes) / runs}};  // staged by the runtime
  j["symmetric_bytes"] = r.stats.symmetric_bytes;
  j["algorithms"] = nlohmann::json::object();
  for (const auto& [node, algo] : r.algorithms) j["algorithms"][node] = algo;
  j["placement"] = nlohmann::json::array();
  for (const auto& d : r.decisions)
    j["placement"].push_back({{"value", d.value}, {"op", d.op}, {"reason", d.reason}, {"bytes_copied", d.bytes_copied}});
  j["eager_s"] = mode == frontend::RunMode::compiled ? nlohmann::json(nullptr) : nlohmann::json(r.eager_s);
  j["compiled_s"] = mode == frontend::RunMode::eager ? nlohmann::json(nullptr) : nlohmann::json(r.compiled_s);
  const int64_t compiled_peak = r.stats.regular_bytes + r.stats.symmetric_bytes + r.output_bytes;
  j["peak_bytes"] = mode == frontend::RunMode::eager ? r.eager_peak_bytes : compiled_peak;
  j["eager_peak_bytes"] = mode == frontend::RunMode::compiled ? nlohmann::json(nullptr) : nlohmann::json(r.eager_peak_bytes);
  j["compiled_peak_bytes"] = mode == frontend::RunMode::eager ? nlohmann::json(nullptr) : nlohmann::json(compiled_peak);
  j["buffers"] = r.stats.buffers;
  j["misplaced_results"] = r.stats.misplaced;
  return j;
}

// Rank 0, after every rank wrote its part: one Chrome trace of all ranks.
void write_trace(const std::string& path, int ranks) {
  std::vector<std::vector<exec::TraceEvent>> all;
  for (int r = 0; r < ranks; ++r) {
    const std::string part = fmt::format("{}.rank{}.part", path, r);
    std::ifstream f(part);
    std::stringstream text;
    text << f.rdbuf();
    all.push_back(f.good() ? exec::events_from_json(text.str()) : std::vector<exec::TraceEvent>{});
    std::remove(part.c_str());
  }
  std::ofstream(path) << exec::chrome_trace_json(all);
  fmt::print("trace: {} (compute and communication lanes of {} rank{}; open in https://ui.perfetto.dev)\n", path,
             ranks, ranks == 1 ? "" : "s");
}

// One rank: run, then agree across ranks on whether every rank matched.
int rank_body(const RunOptions& o) {
  dist::init();
  auto& world = dist::world();
  frontend::RunRequest req{o.file, mode_of(o), o.iters, o.seed, o.inputs, o.save, {}, o.stop_after,
                       placement_options(o.no_placement, o.hints), o.symmetric_inputs};
  {
    passes::PipelineOptions po;
    apply_schedule_flags(o.schedule, &po);
    req.schedule = po.schedule;
    req.check_hazards = po.check_hazards;
  }
  req.trace = !o.trace.empty();
  req.explain = o.explain && world.rank() == 0;
  req.keep_outputs = !o.quiet;
  if (!o.dump_ir.empty() && (o.dump_ir != "-" || world.rank() == 0))
    req.dump = make_ir_dumper(o.dump_ir == "-" ? "-" : fmt::format("{}/rank{}", o.dump_ir, world.rank()));
  frontend::RankReport rep;
  try {
    rep = frontend::run_on_this_rank(req);
  } catch (const ir::ParseError& e) {
    fmt::print(stderr, "{}\n", e.what());
    return 2;
  }
  if (!rep.match) fmt::print(stderr, "check: MISMATCH {}\n", rep.first_difference);
  const std::string trace_part = fmt::format("{}.rank{}.part", o.trace, world.rank());
  if (req.trace) std::ofstream(trace_part) << exec::events_to_json(rep.trace.events);
  Tensor bad = Tensor::empty({1}, DType::i32);
  bad.data<int32_t>()[0] = rep.match ? 0 : 1;
  dist::all_reduce_(world, bad, dist::ReduceOp::sum);
  const int mismatched = bad.data<int32_t>()[0];
  const bool eager = req.mode != frontend::RunMode::compiled, compiled = req.mode != frontend::RunMode::eager;
  // Every rank's outputs to rank 0 (programs whose ranks run different code
  // return different things); printed only when the check, if any, passed, so
  // a mismatch stays the last thing said.
  std::string summary;
  if (!o.quiet && mismatched == 0) {
    auto texts = dist::all_gather_text(rank_text(rep, outputs_block(rep, world.size(), compiled)), "run summary");
    summary = distinct_blocks(texts);
    if (o.iters_given) summary += times_line(rep, o.iters, eager, compiled);
  }
  std::vector<std::string> copies_by_rank;
  if (!o.json.empty())
    copies_by_rank = dist::all_gather_text(
        fmt::format("{} {}", rep.stats.copies.count(), rep.stats.copies.bytes()), "copies by rank");
  if (world.rank() == 0) {
    fmt::print("{}", summary);
    if (rep.compared && mismatched == 0)
      fmt::print("check: OK ({} rank{}, {} output{} and {} input{} bitwise equal, eager vs compiled)\n", world.size(),
                 world.size() == 1 ? "" : "s", rep.outputs_compared, rep.outputs_compared == 1 ? "" : "s",
                 rep.inputs_compared, rep.inputs_compared == 1 ? "" : "s");
    if (o.explain) fmt::print("{}", rep.explain);
    if (req.trace) write_trace(o.trace, world.size());
    if (!o.json.empty()) {
      std::ofstream f(o.json);
      f << report_json(rep, req.mode, mismatched == 0, o.iters, copies_by_rank).dump(2) << "\n";
    }
    std::fflush(stdout);
  }
  return mismatched == 0 ? 0 : 1;
}

int run_run(const RunOptions& o) {
  for (const auto& lib : o.loads) load_library(lib);
  // Refuse a bad program before starting any rank (exit 2, file:line:col), one
  // racy in eager included, on every rank (peers and views may depend on it).
  try {
    std::vector<std::unique_ptr<ir::Graph>> graphs;
    for (int r = 0; r < o.nproc; ++r) {
      graphs.push_back(ir::parse_graph_file(o.file, r, o.nproc));
      passes::check_races(*graphs.back());
    }
    if (!o.inputs.empty()) {
      std::vector<const ir::Graph*> by_rank;
      for (const auto& g : graphs) by_rank.push_back(g.get());
      frontend::check_inputs_dir(o.inputs, by_rank);
    }
  } catch (const Error& e) {
    fmt::print(stderr, "{}\n", e.what());
    return 2;
  }
  runtime::LaunchOptions lo;
  lo.nproc = o.nproc;
  lo.timeout_s = o.timeout;
  lo.prefix_output = false;
  if (o.sim_link_latency_us >= 0)
    lo.env.emplace_back("SYMMFLOW_SIM_LINK_LATENCY_US", fmt::format("{}", o.sim_link_latency_us));
  if (o.sim_link_gbps >= 0) lo.env.emplace_back("SYMMFLOW_SIM_LINK_GBPS", fmt::format("{}", o.sim_link_gbps));
  return runtime::launch_fn(lo, [&] { return rank_body(o); });
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand("run", "Run a .sf program on N ranks: eagerly, compiled, or both compared bitwise");
  cmd->add_option("file", o->file, "The program (.sf text IR, see docs/ir.md)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--nproc,-n", o->nproc, "Number of ranks (1 is a valid world)")->check(rank_count());
  cmd->add_flag("--check", o->check,
                "Run eager and compiled on every rank and compare every output and every input's final "
                "contents bitwise; exit 1 on the first difference");
  cmd->add_option("--mode", o->mode, "eager (op by op), compiled (default) or both")
      ->check(CLI::IsMember({"eager", "compiled", "both"}));
  auto* iters = cmd->add_option("--iters", o->iters, "Runs of each mode; prints the median times (rank 0's)")
                    ->check(CLI::Range(1, 1000000));
  cmd->add_flag("--quiet,-q", o->quiet,
                "Do not print the outputs and times (what --check, --explain and --trace print still appears)");
  cmd->add_flag("--explain", o->explain,
                "Print what the compiler did (copies and why, ops run in place, what compute each communication "
                "op overlaps)");
  cmd->add_option("--trace", o->trace,
                  "Write the last compiled run as Chrome trace events to FILE.json (a compute and a communication "
                  "lane per rank; open in Perfetto)");
  cmd->add_option("--dump-ir", o->dump_ir, "The IR after every pipeline step: '-' (rank 0, stdout) or DIR/rank<R>/");
  cmd->add_option("--json", o->json, "Write a JSON report (rank 0's check, copies, symmetric_bytes, times, peak_bytes; copies_by_rank: every rank's copies)");
  cmd->add_option("--seed", o->seed, "Seed of the input fill (docs/ir.md)");
  cmd->add_option("--inputs", o->inputs,
                  "Read input %x from DIR/x.rank<R>.npy, else DIR/x.npy (a .npy in DIR that no rank reads is "
                  "refused); the inputs without a file are seeded")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--save-outputs", o->save,
                  "Write DIR/out<i>.rank<R>.npy per returned value and DIR/<input>.rank<R>.npy per input");
  cmd->add_option("--timeout", o->timeout, "Kill the job after SEC seconds (exit 124); 0 = no limit");
  cmd->add_option("--sim-link-latency-us", o->sim_link_latency_us,
                  "Simulate a slower link: every P2P op and collective between ranks completes no earlier "
                  "than X us after its start (sets SYMMFLOW_SIM_LINK_LATENCY_US for every rank; 0 = off)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--sim-link-gbps", o->sim_link_gbps,
                  "Simulate a link of Y Gbit/s: every op on a link passes its bytes (ring algorithms' bytes per "
                  "rank) at Y Gbit/s, one transfer at a time each way (sets SYMMFLOW_SIM_LINK_GBPS; 0 = infinite)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--load", o->loads, "Load a shared library of ops first (SYMMFLOW_LIBRARY blocks); repeatable");
  add_placement_options(cmd, &o->no_placement, &o->hints);
  add_schedule_options(cmd, &o->schedule);
  cmd->add_flag("--symmetric-inputs", o->symmetric_inputs,
                "Pass the compiled program symmetric input tensors (as sf::symm::empty would), so placement "
                "copies none of them");
  cmd->add_option("--stop-after", o->stop_after,
                  "Compile only up to this pipeline step and run that (e.g. functionalize: the functional program)")
      ->check(CLI::IsMember(passes::pipeline_steps()));
  cmd->footer(
      "When the run is done, rank 0 prints what it returned: for each output its name, type (dtype and shape), "
      "FNV-1a checksum of its bytes in row-major order (the data of the .npy --save-outputs writes) and first "
      "values; once per program of the file (rank 0's outputs, and those of the first rank of every other "
      "'ranks' set). Outputs come from the compiled run, from the eager one with --mode eager.");
  cmd->callback([o, iters] {
    o->iters_given = iters->count() > 0;
    throw CLI::RuntimeError(run_run(*o));
  });
}

}  // namespace symmflow::tools
