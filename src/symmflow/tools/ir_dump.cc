#include "symmflow/tools/ir_dump.h"

#include <CLI/CLI.hpp>

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <memory>

#include "symmflow/core/error.h"
#include "symmflow/ir/printer.h"

namespace symmflow::tools {

std::function<void(std::string_view, const ir::Graph&)> make_ir_dumper(const std::string& dest) {
  auto step_no = std::make_shared<int>(0);
  return [dest, step_no](std::string_view step, const ir::Graph& g) {
    std::string text = fmt::format("# after {}\n{}", step, ir::print_graph(g, {.types = true}));
    if (dest == "-") {
      fmt::print("{}\n", text);
      std::fflush(stdout);
      return;
    }
    std::filesystem::create_directories(dest);
    auto path = std::filesystem::path(dest) / fmt::format("{:02}-{}.sf", (*step_no)++, step);
    std::ofstream f(path);
    SF_CHECK(f.good(), "--dump-ir: cannot write {}", path.string());
    f << text;
  };
}

std::string to_dot(const ir::Graph& g) {
  std::string out = fmt::format("digraph \"{}\" {{\n  node [shape=box, fontname=monospace];\n", g.name());
  for (const ir::Value* in : g.inputs())
    out += fmt::format("  \"v{}\" [label=\"%{}: {}\", shape=ellipse];\n", in->id(), in->name(), in->type_str());
  std::vector<int> producer_node(g.num_values(), -1);
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const ir::Node* n = g.nodes()[i];
    out += fmt::format("  \"n{}\" [label=\"{}{}\"{}];\n", i, n->functional() ? "functional " : "", n->op_name(),
                       n->has_effects() ? ", style=bold" : "");
    for (const ir::Value* o : n->outputs()) producer_node[size_t(o->id())] = int(i);
    for (const auto& a : n->args())
      a.for_each_value([&](ir::Value* v) {
        int p = producer_node[size_t(v->id())];
        std::string from = p < 0 ? fmt::format("v{}", v->id()) : fmt::format("n{}", p);
        out += fmt::format("  \"{}\" -> \"n{}\" [label=\"%{}\"];\n", from, i, v->name());
      });
  }
  out += "  \"return\" [shape=ellipse];\n";
  for (const ir::Value* v : g.outputs()) {
    int p = producer_node[size_t(v->id())];
    out += fmt::format("  \"{}\" -> \"return\" [label=\"%{}\"];\n", p < 0 ? fmt::format("v{}", v->id()) : fmt::format("n{}", p), v->name());
  }
  return out + "}\n";
}

void add_schedule_options(CLI::App* cmd, ScheduleFlags* f) {
  cmd->add_flag("--no-overlap", f->no_overlap,
                "Complete every communication op right after its start (the baseline without overlap)");
  cmd->add_option("--max-in-flight", f->max_in_flight, "Most asynchronous communication ops in flight at once (default 8)")
      ->check(CLI::Range(1, 1024));
  cmd->add_flag("--verify", f->verify,
                "Check the final schedule with the independent hazard verifier (always on in debug builds and "
                "under SYMMFLOW_VERIFY=1)");
}

void apply_schedule_flags(const ScheduleFlags& f, passes::PipelineOptions* p) {
  p->schedule.overlap = !f.no_overlap;
  p->schedule.max_in_flight = f.max_in_flight;
  p->check_hazards |= f.verify;
}

void add_placement_options(CLI::App* cmd, bool* no_placement, std::vector<std::string>* hints) {
  cmd->add_flag("--no-placement", *no_placement,
                "Place only what ops require in symmetric memory; c10d collectives and P2P take the staged path");
  cmd->add_option("--symmetric-hint", *hints,
                  "OP:ARG - treat argument ARG of op OP as needing symmetric memory (for ops without a "
                  "register_symm_mem_args); repeatable");
}

passes::PlacementOptions placement_options(bool no_placement, const std::vector<std::string>& hints) {
  passes::PlacementOptions p;
  p.enabled = !no_placement;
  for (const auto& h : hints) {
    auto colon = h.rfind(':');
    SF_CHECK(colon != std::string::npos && colon > 0 && colon + 1 < h.size() && h[colon - 1] != ':',
             "--symmetric-hint: expected OP:ARG (e.g. myops::fused_rms_norm_:x), got '{}'", h);
    p.hints.emplace_back(h.substr(0, colon), h.substr(colon + 1));
  }
  return p;
}

}  // namespace symmflow::tools
