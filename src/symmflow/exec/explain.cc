#include "symmflow/exec/explain.h"

#include <fmt/format.h>

#include "symmflow/ir/printer.h"
#include "symmflow/passes/schedule.h"

namespace symmflow::exec {

std::string explain(const ir::Graph& g) { return explain(g, copy_report(g)); }

std::string explain(const ir::Graph& g, const CopyReport& copies) {
  std::string out;
  int in_place = 0;
  for (const ir::Node* n : g.nodes())
    if (!n->functional() && !n->writes().empty() && n->note().empty()) ++in_place;
  // Every copy the header counts, one line each (the header is their sum).
  for (const CopyEntry& e : copies.entries) {
    const std::string where = e.loc.line ? fmt::format("{}:{}", e.loc.line, e.loc.col) : e.value;
    out += fmt::format("  {}: {} bytes copied{} [{}] ({})\n", where.empty() ? "run" : where, e.bytes,
                       e.count == 1 ? "" : fmt::format(" in {} copies", e.count), origin_name(e.origin), e.why);
  }
  if (!copies.staged_measured)
    out += "  staged copies (communication buffers that are not symmetric) are counted when the program runs "
           "(symmflow run --explain)\n";
  const auto& plan = g.plan();
  for (const auto& d : plan.decisions) out += fmt::format("  symmetric {} for {}: {}\n", d.value, d.op, d.reason);
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
    out += fmt::format("  memory: {} buffers planned, regular arena {} bytes, symmetric arena {} bytes{}\n",
                       plan.slots.size(), plan.arena_bytes[0], plan.arena_bytes[1], ir::symmetric_regions(plan));
  return fmt::format("explain @{} (rank {} of {}): {} ops, {} run in place, {} cop{} ({} bytes)\n{}", g.name(),
                     g.rank(), g.world(), g.size(), in_place, copies.count(), copies.count() == 1 ? "y" : "ies",
                     copies.bytes(), out);
}

}  // namespace symmflow::exec
