#include "symmflow/exec/copy_report.h"

#include <fmt/format.h>

#include "symmflow/ir/alias.h"

namespace symmflow::exec {

namespace {

bool in_symmetric_arena(const ir::Graph& g, const ir::Value* root) {
  auto it = g.plan().slots.find(root->id());
  return it != g.plan().slots.end() && it->second.arena == ir::Arena::symmetric;
}

}  // namespace

std::string_view origin_name(CopyOrigin o) {
  switch (o) {
    case CopyOrigin::input_to_symmetric: return "inputs_to_symmetric";
    case CopyOrigin::output_from_symmetric: return "outputs_from_symmetric";
    case CopyOrigin::staged: return "staged";
    case CopyOrigin::reinplace: return "reinplace";
  }
  return "?";
}

int64_t CopyReport::count() const {
  int64_t n = 0;
  for (const auto& e : entries) n += e.count;
  return n;
}

int64_t CopyReport::bytes() const {
  int64_t n = 0;
  for (const auto& e : entries) n += e.bytes;
  return n;
}

int64_t CopyReport::count(CopyOrigin o) const {
  int64_t n = 0;
  for (const auto& e : entries) n += e.origin == o ? e.count : 0;
  return n;
}

int64_t CopyReport::bytes(CopyOrigin o) const {
  int64_t n = 0;
  for (const auto& e : entries) n += e.origin == o ? e.bytes : 0;
  return n;
}

void CopyReport::add_staged(const ir::Node* op, int64_t count, int64_t bytes) {
  staged_measured = true;
  if (count == 0 && bytes == 0) return;
  if (!op) {
    entries.push_back({CopyOrigin::staged, "", "the runtime's staged path, made while the executor progressed the "
                       "ops in flight between instructions (measured over the last run)", {}, count, bytes});
    return;
  }
  entries.push_back({CopyOrigin::staged, op->outputs().empty() ? "" : "%" + op->output(0)->name(),
                     fmt::format("{} took the runtime's staged path (a buffer that is not symmetric or not "
                                 "contiguous), measured over the last run",
                                 op->op_name()),
                     op->loc(), count, bytes});
}

std::vector<bool> written_inputs(const ir::Graph& g) {
  const auto roots = ir::storage_roots(g);
  std::vector<bool> root_written(g.num_values(), false);
  for (const ir::Node* n : g.nodes())
    for (const auto& w : n->writes())
      if (const ir::Value* r = roots[size_t(n->value_at(w)->id())]) root_written[size_t(r->id())] = true;
  std::vector<bool> out;
  for (const ir::Value* in : g.inputs()) out.push_back(root_written[size_t(in->id())]);
  return out;
}

CopyReport copy_report(const ir::Graph& g, const std::vector<bool>& symmetric_inputs) {
  CopyReport r;
  auto caller_symmetric = [&](size_t i) { return i < symmetric_inputs.size() && symmetric_inputs[i]; };
  // Inputs: copied in before the run, and back after it when written.
  const auto written = written_inputs(g);
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const ir::Value* in = g.inputs()[i];
    if (!in->is_tensor() || !in->symmetric() || caller_symmetric(i)) continue;
    const std::string name = "%" + in->name();
    r.entries.push_back({CopyOrigin::input_to_symmetric, name,
                         fmt::format("graph input {} is needed symmetric and was passed as a regular tensor: "
                                     "copied into its symmetric buffer",
                                     name),
                         {}, 1, in->type().nbytes()});
    if (written[i])
      r.entries.push_back({CopyOrigin::input_to_symmetric, name,
                           fmt::format("graph input {} is written: its symmetric buffer is copied back", name), {}, 1,
                           in->type().nbytes()});
  }
  // The compiler's copies, in program order.
  for (const ir::Node* n : g.nodes()) {
    if (n->note().rfind("copy:", 0) == 0) {
      r.entries.push_back({CopyOrigin::reinplace, "%" + n->output(0)->name(), n->note(), n->loc(), 1,
                           n->output(0)->type().nbytes()});
    } else if (n->functional()) {
      for (const auto& w : n->writes()) {
        const ir::Value* v = n->value_at(w);
        r.entries.push_back({CopyOrigin::reinplace, "%" + v->name(),
                             fmt::format("copy: functional {} copies %{}, which it writes", n->op_name(), v->name()),
                             n->loc(), 1, v->type().nbytes()});
      }
    }
  }
  // Outputs whose buffer is the program's symmetric arena (an input passed
  // symmetric is the caller's own buffer, not the arena's).
  const auto roots = ir::storage_roots(g);
  for (const ir::Value* v : g.outputs()) {
    if (!v->is_tensor()) continue;
    const ir::Value* root = roots[size_t(v->id())];
    if (!root || !in_symmetric_arena(g, root)) continue;
    if (!root->producer()) {
      size_t i = 0;
      while (i < g.inputs().size() && g.inputs()[i] != root) ++i;
      if (caller_symmetric(i)) continue;
    }
    r.entries.push_back({CopyOrigin::output_from_symmetric, "%" + v->name(),
                         fmt::format("returned %{} lives in the symmetric arena: the caller gets a copy", v->name()),
                         {}, 1, v->type().nbytes()});
  }
  return r;
}

}  // namespace symmflow::exec
