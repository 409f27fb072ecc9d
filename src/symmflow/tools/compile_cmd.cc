// `symmflow compile FILE.sf --world N [--rank R] [--dump-ir DIR|-] [--explain] [--dot FILE]`:
// the compiler alone, for one rank of a world, without running anything.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <fstream>

#include "symmflow/core/params.h"
#include "symmflow/exec/explain.h"
#include "symmflow/ir/parser.h"
#include "symmflow/ir/printer.h"
#include "symmflow/library/plugin.h"
#include "symmflow/passes/pipeline.h"
#include "symmflow/tools/commands.h"
#include "symmflow/tools/ir_dump.h"

namespace symmflow::tools {
namespace {

struct CompileOptions {
  std::string file;
  int world = 1;
  int rank = 0;
  std::string dump_ir;
  bool explain = false;
  std::string dot;
  std::vector<std::string> loads;
  bool no_placement = false;
  std::vector<std::string> hints;
  ScheduleFlags schedule;
};

int run_compile(const CompileOptions& o) {
  for (const auto& lib : o.loads) load_library(lib);
  if (o.rank >= o.world) {
    fmt::print(stderr, "symmflow compile: --rank {} is not in a world of {}\n", o.rank, o.world);
    return 2;
  }
  try {
    auto g = ir::parse_graph_file(o.file, o.rank, o.world);
    passes::PipelineOptions p;
    if (!o.dump_ir.empty()) p.dump = make_ir_dumper(o.dump_ir);
    p.placement = placement_options(o.no_placement, o.hints);
    apply_schedule_flags(o.schedule, &p);
    passes::optimize(*g, p);
    if (o.dump_ir.empty()) fmt::print("{}", ir::print_graph(*g, {.types = true}));
    if (o.explain) fmt::print("{}", exec::explain(*g));
    if (!o.dot.empty()) {
      std::ofstream f(o.dot);
      f << to_dot(*g);
      if (!f.good()) {
        fmt::print(stderr, "symmflow compile: cannot write {}\n", o.dot);
        return 1;
      }
    }
  } catch (const Error& e) {
    // Parse and verify errors are the program's fault: exit 2 (DESIGN.md §5).
    fmt::print(stderr, "{}\n", e.what());
    return 2;
  }
  return 0;
}

}  // namespace

void add_compile_command(CLI::App& app) {
  auto o = std::make_shared<CompileOptions>();
  auto* cmd = app.add_subcommand(
      "compile", "Compile a .sf program for one rank of a world and print the optimized IR (nothing runs)");
  cmd->add_option("file", o->file, "The program (.sf text IR, see docs/ir.md)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--world", o->world, "World size the program is compiled for")->required()->check(rank_count());
  cmd->add_option("--rank", o->rank, "Rank to compile for (rank/world expressions use it)")
      ->check(CLI::Range(0, params::kMaxRanks - 1));
  cmd->add_option("--dump-ir", o->dump_ir,
                  "Print the IR after every pipeline step: '-' for stdout, or a folder (one NN-step.sf each)");
  cmd->add_flag("--explain", o->explain,
                "Say which copies the compiler inserted and why, how many ops run in place, and what compute each "
                "communication op overlaps");
  cmd->add_option("--dot", o->dot, "Write the optimized graph as Graphviz to this file");
  cmd->add_option("--load", o->loads, "Load a shared library of ops first (SYMMFLOW_LIBRARY blocks); repeatable");
  add_placement_options(cmd, &o->no_placement, &o->hints);
  add_schedule_options(cmd, &o->schedule);
  cmd->callback([o] { throw CLI::RuntimeError(run_compile(*o)); });
}

}  // namespace symmflow::tools
