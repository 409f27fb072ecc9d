#include "symmflow/exec/copy_report.h"

#include <fmt/format.h>

namespace symmflow::exec {

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
    entries.push_back({CopyOrigin::staged, "", "the runtime's staged path, for no op of this program (measured "
                       "over the last run)", {}, count, bytes});
    return;
  }
  entries.push_back({CopyOrigin::staged, op->outputs().empty() ? "" : "%" + op->output(0)->name(),
                     fmt::format("{} copied through the runtime (a buffer that is not symmetric or not "
                                 "contiguous, or a copy the op makes by definition), measured over the last run",
                                 op->op_name()),
                     op->loc(), count, bytes, op});
}

CopyReport copy_report(const ir::Graph& g, const std::vector<bool>& symmetric_inputs) {
  const ir::ExecPlan* plan = g.exec_plan();
  SF_CHECK(plan, "@{}: no executable plan: the program was not compiled (passes::optimize builds it)", g.name());
  CopyReport r;
  for (const ir::PlannedCopy& c : plan->copies) {
    const bool passed_symmetric = c.input >= 0 && size_t(c.input) < symmetric_inputs.size() && symmetric_inputs[size_t(c.input)];
    if (!passed_symmetric) r.entries.push_back({c.origin, c.value, c.why, c.loc, 1, c.bytes});
  }
  return r;
}

}  // namespace symmflow::exec
