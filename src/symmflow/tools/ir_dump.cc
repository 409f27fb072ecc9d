#include "symmflow/tools/ir_dump.h"

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

}  // namespace symmflow::tools
