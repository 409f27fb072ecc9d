#include "symmflow/exec/explain.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <unordered_map>

#include "symmflow/ir/exec_plan.h"
#include "symmflow/ir/printer.h"
#include "symmflow/ops/fused_pointwise.h"

namespace symmflow::exec {

namespace {

// Each asynchronous op of the plan and the compute that runs while it is in
// flight (its instruction up to its last wait).
std::string explain_overlap(const ir::Graph& g, const ir::ExecPlan& plan) {
  const auto& steps = plan.instructions;
  auto where = [&](const ir::Node* n) {
    return n->loc().line ? fmt::format(" ({}:{})", g.file().empty() ? "<input>" : g.file(), n->loc().line)
                         : std::string();
  };
  auto label = [&](const ir::Node* n) {
    std::vector<std::string> outs;
    for (const ir::Value* v : n->outputs()) outs.push_back("%" + v->name());
    return fmt::format("{}{}{}", outs.empty() ? "" : fmt::format("{} = ", fmt::join(outs, ", ")), n->op_name(),
                       where(n));
  };
  std::string s;
  int count = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].waits.empty()) continue;
    ++count;
    const size_t last = size_t(*std::max_element(steps[i].waits.begin(), steps[i].waits.end()));
    // The kernels that run while it is in flight (views cost nothing: not listed).
    std::vector<std::string> compute;
    for (size_t j = i + 1; j < last; ++j)
      if (steps[j].kind == ir::InstrKind::compute) compute.push_back(steps[j].label);
    constexpr size_t kListed = 8;
    std::string list = fmt::format(
        "{}", fmt::join(compute.begin(), compute.begin() + long(std::min(compute.size(), kListed)), ", "));
    if (compute.size() > kListed) list += fmt::format(", ... ({} more)", compute.size() - kListed);
    s += fmt::format("  {}\n    in flight until instruction {} of {}; overlaps {}\n", label(steps[i].node), last + 1,
                     steps.size(),
                     compute.empty() ? "no compute (its result is needed at once)"
                                     : fmt::format("{} kernel{}: {}", compute.size(), compute.size() == 1 ? "" : "s",
                                                   list));
  }
  return fmt::format("overlap: {} asynchronous communication op{}\n{}", count, count == 1 ? "" : "s", s);
}

// Each node of a fused op (`op`: passes/fuse_rows, passes/fuse_pointwise): the
// chain of ops it runs in one loop; `what` and `loop` say what it fuses and how.
std::string explain_fused(const ir::ExecPlan& plan, std::string_view op, std::string_view what,
                          std::string_view loop) {
  std::string s;
  int groups = 0;
  size_t ops = 0;
  for (const ir::Instruction& i : plan.instructions) {
    const ir::Node* n = i.node;
    if (n->op_name() != op) continue;
    const auto steps = ops::parse_fused_program(n->arg(1).constant.to_string());
    std::vector<std::string_view> names;
    for (const auto& st : steps) names.push_back(st.op);
    ++groups;
    ops += steps.size();
    s += fmt::format("    %{}{}: {} ops, {} input{}: {}\n", n->output(0)->name(),
                     n->loc().line ? fmt::format(" ({}:{})", n->loc().line, n->loc().col) : "", steps.size(),
                     n->arg(0).elems.size(), n->arg(0).elems.size() == 1 ? "" : "s", fmt::join(names, " -> "));
  }
  if (groups == 0) return "";  // nothing fused: no line
  return fmt::format("  fused: {} group{} of {} ({} ops), each one loop over {}\n{}", groups, groups == 1 ? "" : "s",
                     what, ops, loop, s);
}

}  // namespace

std::string explain(const ir::Graph& g) { return explain(g, copy_report(g)); }

std::string explain(const ir::Graph& g, const CopyReport& copies) {
  const ir::ExecPlan* plan = g.exec_plan();
  SF_CHECK(plan, "explain @{}: no executable plan: the program was not compiled", g.name());
  std::string out;
  int in_place = 0;
  for (const ir::Instruction& s : plan->instructions)
    if (!s.node->functional() && !s.node->writes().empty() && s.node->origin() == ir::NodeOrigin::program) ++in_place;
  // Every copy the header counts, one line each (the header is their sum).
  for (const CopyEntry& e : copies.entries) {
    const std::string where = e.loc.line ? fmt::format("{}:{}", e.loc.line, e.loc.col) : e.value;
    out += fmt::format("  {}: {} bytes copied{} [{}] ({})\n", where.empty() ? "run" : where, e.bytes,
                       e.count == 1 ? "" : fmt::format(" in {} copies", e.count), origin_name(e.origin), e.why);
  }
  if (!copies.staged_measured)
    out += "  staged copies (communication buffers that are not symmetric) are counted when the program runs "
           "(symmflow run --explain)\n";
  const auto& mem = g.plan();
  for (const auto& d : mem.decisions) out += fmt::format("  symmetric {} for {}: {}\n", d.value, d.op, d.reason);
  // The label is the plan's; what the runtime staged for an op on the
  // measured run is said beside it, so that the line never says `direct` for
  // an op whose copies the header counts.
  std::unordered_map<const ir::Node*, int64_t> staged_by_op;
  for (const CopyEntry& e : copies.entries)
    if (e.origin == CopyOrigin::staged && e.op) staged_by_op[e.op] += e.bytes;
  for (const ir::Instruction& s : plan->instructions) {
    if (s.algorithm == ir::Algorithm::none) continue;
    const auto waits_for_post = std::count(s.rendezvous.begin(), s.rendezvous.end(), true);
    const auto staged = staged_by_op.find(s.node);
    const int64_t staged_bytes = staged == staged_by_op.end() ? 0 : staged->second;
    out += fmt::format("  {}:{}: {} runs {}{}{}\n", s.node->loc().line, s.node->loc().col, s.node->op_name(),
                       ir::algorithm_name(s.algorithm),
                       waits_for_post == 0 ? ""
                                           : fmt::format(", {} send{} rendezvous (waits for the receive's post: "
                                                         "never an eager copy)",
                                                         waits_for_post, waits_for_post == 1 ? "" : "s"),
                       s.algorithm == ir::Algorithm::staged || staged_bytes == 0
                           ? ""
                           : fmt::format(", staged {} bytes on this rank's run", staged_bytes));
  }
  {
    // The overlap the schedule gives each communication op, indented like the rest.
    std::string ov = explain_overlap(g, *plan);
    for (size_t b = 0, e; b < ov.size(); b = e + 1) {
      e = ov.find('\n', b);
      if (e == std::string::npos) e = ov.size();
      out += "  " + ov.substr(b, e - b) + "\n";
    }
  }
  out += explain_fused(*plan, "symmflow::fused_rows", "row-wise ops with reductions over the last dim",
                      "blocks of rows");
  out += explain_fused(*plan, "symmflow::fused_pointwise", "elementwise ops", "tiles");
  if (mem.planned)
    out += fmt::format("  memory: {} buffers planned, regular arena {} bytes, symmetric arena {} bytes{}\n",
                       mem.slots.size(), mem.arena_bytes[0], mem.arena_bytes[1], ir::symmetric_regions(mem));
  return fmt::format("explain @{} (rank {} of {}): {} ops, {} run in place, {} cop{} ({} bytes)\n{}", g.name(),
                     g.rank(), g.world(), g.size(), in_place, copies.count(), copies.count() == 1 ? "y" : "ies",
                     copies.bytes(), out);
}

}  // namespace symmflow::exec
