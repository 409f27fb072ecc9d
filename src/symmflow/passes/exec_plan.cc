#include "symmflow/passes/exec_plan.h"

#include <fmt/format.h>

#include <algorithm>

#include "symmflow/ir/alias.h"
#include "symmflow/ir/exec_plan.h"
#include "symmflow/ir/overwritten_inputs.h"
#include "symmflow/passes/comm_ops.h"

namespace symmflow::passes {

using ir::CopyOrigin;
using ir::Node;
using ir::Value;

namespace {

ir::InstrKind kind_of(const Node& n) {
  switch (comm_kind(n)) {
    case CommKind::p2p: return ir::InstrKind::p2p;
    case CommKind::collective: return ir::InstrKind::collective;
    case CommKind::wait: return ir::InstrKind::wait;
    case CommKind::effect: return ir::InstrKind::effect;
    case CommKind::none: break;
  }
  return is_pure_view(n) ? ir::InstrKind::view : ir::InstrKind::compute;
}

// Whether each graph input's storage is written by the program (a copy into
// symmetric memory is copied back then).
std::vector<bool> written_inputs(const ir::Graph& g, const std::vector<Value*>& roots) {
  std::vector<bool> root_written(g.num_values(), false);
  for (const Node* n : g.nodes())
    for (const auto& w : n->writes())
      if (const Value* r = roots[size_t(n->value_at(w)->id())]) root_written[size_t(r->id())] = true;
  std::vector<bool> out;
  for (const Value* in : g.inputs()) out.push_back(root_written[size_t(in->id())]);
  return out;
}

// Every copy a run makes, in report order: graph inputs copied into their
// symmetric buffer (and back when written), the compiler's copies in program
// order, returned values copied out of the symmetric arena.
std::vector<ir::PlannedCopy> planned_copies(const ir::Graph& g, const ir::ExecPlan& p,
                                            const std::vector<Value*>& roots) {
  std::vector<ir::PlannedCopy> out;
  // Which graph input a storage is (-1: none): its copies are made only when
  // the caller passes that input regular.
  auto input_index = [&](const Value* root) {
    const auto& in = g.inputs();
    const auto it = std::find(in.begin(), in.end(), root);
    return it == in.end() ? -1 : int(it - in.begin());
  };
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const Value* in = g.inputs()[i];
    if (!p.input_symmetric[i]) continue;
    const std::string name = "%" + in->name();
    if (p.input_copied_in[i])
      out.push_back({CopyOrigin::input_to_symmetric, name,
                     fmt::format("graph input {} is needed symmetric and was passed as a regular tensor: copied into "
                                 "its symmetric buffer",
                                 name),
                     {}, in->type().nbytes(), int(i)});
    if (p.input_written[i])
      out.push_back({CopyOrigin::input_to_symmetric, name,
                     fmt::format("graph input {} is written: its symmetric buffer is copied back", name), {},
                     in->type().nbytes(), int(i)});
  }
  for (const Node* n : g.nodes()) {
    if (n->origin() == ir::NodeOrigin::received_back) {
      // Made only when the caller passes that input regular (else the twin is the input).
      const Value* dst = roots[size_t(n->arg(0).value->id())];
      out.push_back({CopyOrigin::input_to_symmetric, "%" + dst->name(), n->note(), n->loc(),
                     n->arg(1).value->type().nbytes(), input_index(dst)});
    } else if (n->origin() == ir::NodeOrigin::reinplace_copy) {
      out.push_back({CopyOrigin::reinplace, "%" + n->output(0)->name(), n->note(), n->loc(),
                     n->output(0)->type().nbytes()});
    } else if (n->functional()) {
      for (const auto& w : n->writes()) {
        const Value* v = n->value_at(w);
        out.push_back({CopyOrigin::reinplace, "%" + v->name(),
                       fmt::format("copy: functional {} copies %{}, which it writes", n->op_name(), v->name()),
                       n->loc(), v->type().nbytes()});
      }
    }
  }
  // Outputs whose buffer is the program's symmetric arena (an input passed
  // symmetric is the caller's own buffer, not the arena's).
  for (const Value* v : g.outputs()) {
    if (!v->is_tensor()) continue;
    const Value* root = roots[size_t(v->id())];
    if (!root) continue;
    auto slot = g.plan().slots.find(root->id());
    if (slot == g.plan().slots.end() || slot->second.arena != ir::Arena::symmetric) continue;
    out.push_back({CopyOrigin::output_from_symmetric, "%" + v->name(),
                   fmt::format("returned %{} lives in the symmetric arena: the caller gets a copy", v->name()),
                   {}, v->type().nbytes(), input_index(root)});
  }
  return out;
}

}  // namespace

bool BuildExecPlan::run(ir::Graph& g) {
  SF_CHECK(g.plan().planned, "exec_plan @{}: the memory plan is missing (run memory_plan first)", g.name());
  auto p = std::make_unique<ir::ExecPlan>();
  const auto& plan = g.plan();
  const auto roots = ir::storage_roots(g);
  const auto pairs = async_pairs(g);
  p->instructions.reserve(g.size());  // one per node: no regrowth copying them all
  for (const Node* n : g.nodes()) {
    ir::Instruction s;
    s.node = n;
    s.kind = kind_of(*n);
    s.algorithm = n->algorithm();
    auto waits = pairs.waits_of.find(n);
    s.start_async = s.kind == ir::InstrKind::collective && waits != pairs.waits_of.end();
    const Node* comm = issues_comm(*n) ? n : nullptr;
    if (auto it = pairs.start_of.find(n); it != pairs.start_of.end()) {
      s.start = int(g.position(it->second));  // instructions are the nodes, in order
      comm = it->second;
    }
    if (comm) s.group = group_of(*comm);
    if (s.kind == ir::InstrKind::p2p) s.rendezvous = ir::rendezvous_sends(g, *n, roots);
    if (waits != pairs.waits_of.end())
      for (const Node* w : waits->second) s.waits.push_back(int(g.position(w)));
    s.label = n->op_name();
    if (!n->outputs().empty()) s.label += " %" + n->output(0)->name();
    for (const Value* o : n->outputs()) {
      const bool owns = roots[size_t(o->id())] == o;
      if (plan.slots.count(o->id())) s.planned.push_back(o->id());
      if (owns && o->type().storage_bytes() > 0) s.fresh.push_back(o->id());
      // Results the plan cannot place (an opaque op's, or the copies a node still
      // in functional form makes) are allocated symmetric around the node.
      if (o->symmetric() && owns && (!is_builtin_op(*n) || n->functional())) s.scoped = true;
    }
    p->instructions.push_back(std::move(s));
  }
  const auto overwritten = ir::overwritten_before_read(g, roots);
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const Value* in = g.inputs()[i];
    p->input_symmetric.push_back(in->is_tensor() && in->symmetric());
    p->input_copied_in.push_back(p->input_symmetric.back() && !overwritten[i]);
  }
  p->input_written = written_inputs(g, roots);
  p->copies = planned_copies(g, *p, roots);
  p->built = true;
  g.set_exec_plan(std::move(p));
  return false;
}

}  // namespace symmflow::passes
