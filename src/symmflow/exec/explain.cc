#include "symmflow/exec/explain.h"

#include <fmt/format.h>

#include "symmflow/passes/schedule.h"

namespace symmflow::exec {

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

}  // namespace symmflow::exec
