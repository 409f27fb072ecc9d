#include "symmflow/tools/ir_dump.h"

#include <CLI/CLI.hpp>

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <memory>

#include "symmflow/core/error.h"
#include "symmflow/ir/printer.h"
#include "symmflow/passes/schedule.h"

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

std::string explain(const ir::Graph& g) {
  std::string out;
  int copies = 0, in_place = 0;
  int64_t bytes = 0;
  for (const ir::Node* n : g.nodes()) {
    const auto& loc = n->loc();
    if (n->note().rfind("copy:", 0) == 0) {
      const auto& t = n->output(0)->type();
      int64_t b = t.numel() * int64_t(element_size(t.dtype));
      out += fmt::format("  {}:{}: {} bytes copied ({})\n", loc.line, loc.col, b, n->note());
      ++copies;
      bytes += b;
    } else if (!n->writes().empty() && n->note().empty()) {
      ++in_place;
    }
  }
  const auto& plan = g.plan();
  for (const auto& d : plan.decisions)
    out += fmt::format("  symmetric {} for {}: {}{}\n", d.value, d.op, d.reason,
                       d.bytes_copied ? fmt::format(" [{} bytes copied per run]", d.bytes_copied) : "");
  for (const ir::Node* n : g.nodes())
    if (!n->algorithm().empty())
      out += fmt::format("  {}:{}: {} runs {}\n", n->loc().line, n->loc().col, n->op_name(), n->algorithm());
  {
    // The overlap the schedule gives each communication op, indented like the rest.
    std::string ov = passes::explain_overlap(g);
    for (size_t b = 0, e; b < ov.size(); b = e + 1) {
      e = ov.find('\n', b);
      if (e == std::string::npos) e = ov.size();
      out += "  " + ov.substr(b, e - b) + "\n";
    }
  }
  if (plan.planned)
    out += fmt::format("  memory: {} buffers planned, regular arena {} bytes, symmetric arena {} bytes\n",
                       plan.slots.size(), plan.arena_bytes[0], plan.arena_bytes[1]);
  return fmt::format("explain @{} (rank {} of {}): {} ops, {} run in place, {} cop{} ({} bytes)\n{}", g.name(),
                     g.rank(), g.world(), g.size(), in_place, copies, copies == 1 ? "y" : "ies", bytes, out);
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
