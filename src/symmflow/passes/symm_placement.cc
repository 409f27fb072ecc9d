#include "symmflow/passes/symm_placement.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "symmflow/ir/alias.h"
#include "symmflow/ir/overwritten_inputs.h"
#include "symmflow/passes/comm_ops.h"

namespace symmflow::passes {

using ir::Node;
using ir::PlacementDecision;
using ir::Value;

namespace {

bool wants_symmetric(const Node& n) {
  const auto& s = n.schema();
  return s.ns == "c10d" && s.name != "wait_tensor";
}

bool is_p2p(const Node& n) { return comm_kind(n) == CommKind::p2p; }

// One storage that some op wants symmetric.
struct Want {
  bool hard = false;                 // registered or hinted: must be symmetric
  std::set<std::string> groups;      // the groups that want it
  std::vector<std::pair<Value*, std::string>> uses;  // (value read, "op(arg)")
};

}  // namespace

bool SymmPlacement::run(ir::Graph& g) {
  auto& decisions = g.plan().decisions;
  decisions.clear();
  auto roots = ir::storage_roots(g);
  // By storage root, in value order (a deterministic plan on every rank).
  auto by_id = [](Value* a, Value* b) { return a->id() < b->id(); };
  std::map<Value*, Want, decltype(by_id)> ordered(by_id);

  for (const Node* n : g.nodes()) {
    const auto& schema = n->schema();
    std::vector<std::string> hard = n->op().symm_mem_args();
    for (const auto& [op, arg] : o_.hints)
      if (op == n->op_name() || op == schema.qualified_name()) hard.push_back(arg);
    const std::string group = group_of(*n);
    // P2P wants its receive buffers symmetric (the sender puts straight into
    // them), not its send buffers: a symmetric send to a regular receive buffer
    // completes only when the receiver copies it out, which needs the receiver to
    // make progress — and it may be inside a collective by then.
    const std::vector<Value*> receives = ir::receive_buffers(*n);
    for (size_t i = 0; i < schema.arguments.size(); ++i) {
      const std::string& arg = schema.arguments[i].name;
      const bool is_hard = std::find(hard.begin(), hard.end(), arg) != hard.end();
      if (!is_hard && (!o_.enabled || !wants_symmetric(*n))) continue;
      n->arg(i).for_each_value([&](Value* v) {
        if (!v->is_tensor()) return;
        if (!is_hard && is_p2p(*n) && std::find(receives.begin(), receives.end(), v) == receives.end()) return;
        Value* r = roots[size_t(v->id())];
        Want& w = ordered[r];
        w.hard |= is_hard;
        if (!group.empty()) w.groups.insert(group);
        w.uses.emplace_back(v, fmt::format("{}({})", n->op_name(), arg));
      });
    }
    // A collective's own fresh results are in the same group as its inputs.
    if (o_.enabled && wants_symmetric(*n))
      for (Value* o : n->outputs())
        if (roots[size_t(o->id())] == o) {
          Want& w = ordered[o];
          if (!group.empty()) w.groups.insert(group);
          w.uses.emplace_back(o, fmt::format("{}(result)", n->op_name()));
        }
  }

  // Graph inputs whose every byte is written before any read (by value id).
  std::vector<bool> overwritten(g.num_values(), false);
  const auto overwritten_inputs = ir::overwritten_before_read(g, roots);
  for (size_t i = 0; i < g.inputs().size(); ++i) overwritten[size_t(g.inputs()[i]->id())] = overwritten_inputs[i];
  bool changed = false;
  for (auto& [root, w] : ordered) {
    const auto& [value, use] = w.uses.front();
    PlacementDecision d;
    d.value = "%" + value->name();
    d.op = use;
    if (w.groups.size() > 1) {
      d.kind = PlacementDecision::Kind::staged;
      d.reason = fmt::format("needed symmetric in groups {} at once: a buffer lives in one group's heap; "
                             "the staged path copies instead",
                             fmt::join(w.groups, ", "));
      decisions.push_back(d);
      continue;
    }
    const Node* p = root->producer();
    // A graph input P2P receives into in part (a halo row of a grid) and that
    // receive_twins left alone is copied in like any other: one copy per run
    // (and one back when written), however many transfers the program makes,
    // where staging would copy on both ends of every transfer; and a caller who
    // passes it symmetric pays nothing.
    const bool written_first = !p && overwritten[size_t(root->id())];
    root->set_symmetric(true);
    changed = true;
    if (written_first) {
      // Every byte written before anything reads it (received into whole, or
      // filled in parts): its old contents are dead, so nothing is copied in,
      // only back (staging would copy on both ends of every transfer).
      d.kind = PlacementDecision::Kind::input_copy;
      d.bytes_copied = root->type().nbytes();
      d.reason = fmt::format("graph input %{} is overwritten whole before any read: placed symmetric and not copied "
                             "in, copied back after the run (1 copy), unless the caller passes a symmetric tensor "
                             "(then 0 copies)",
                             root->name());
    } else if (!p) {
      d.kind = PlacementDecision::Kind::input_copy;
      d.bytes_copied = root->type().nbytes();
      d.reason = fmt::format("graph input %{}: copied into a symmetric buffer before the run, unless the "
                             "caller passes a symmetric tensor (then 0 copies)",
                             root->name());
    } else if (!is_builtin_op(*p)) {
      d.kind = PlacementDecision::Kind::scope;
      d.reason = fmt::format("produced by {}, an opaque custom op: it runs under a symmetric-allocation "
                             "scope, so its results are symmetric (0 copies)",
                             p->op_name());
    } else if (p->functional()) {
      d.kind = PlacementDecision::Kind::scope;
      d.reason = fmt::format("produced by functional {}, which copies what it writes: the copies are made "
                             "under a symmetric-allocation scope",
                             p->op_name());
    } else if (value != root) {
      d.kind = PlacementDecision::Kind::view_base;
      d.reason = fmt::format("a view of %{}: its base, produced by {}, is planned in the symmetric arena "
                             "(0 copies)",
                             root->name(), p->op_name());
    } else {
      d.kind = PlacementDecision::Kind::planned;
      d.reason = fmt::format("produced by {}, which writes straight into the symmetric arena (0 copies)",
                             p->op_name());
    }
    decisions.push_back(d);
  }
  return changed;
}

}  // namespace symmflow::passes
