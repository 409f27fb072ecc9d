#include "symmflow/passes/fuse_pointwise.h"

#include <algorithm>
#include <unordered_map>

#include "symmflow/ops/fused_pointwise.h"
#include "symmflow/passes/dce.h"
#include "symmflow/passes/fused_groups.h"

namespace symmflow::passes {

namespace {

// An operand the fused kernel tiles (ops/fused_pointwise.h): the result's shape
// (any strides at rank 1 or 2: a column slice of a grid), one element, or a
// contiguous row of a result of rank >= 2.
bool tileable_operand(const ir::TensorType& t, const ir::Dims& shape) {
  if (t.sizes == shape) return contiguous(t) || shape.size() <= 2;
  if (t.numel() == 1) return true;
  const auto& s = t.sizes;
  const bool row = shape.size() >= 2 && s.size() <= shape.size() && !s.empty() && s.back() == shape.back() &&
                   std::all_of(s.begin(), s.end() - 1, [](int64_t d) { return d == 1; });
  return row && (t.strides.empty() || t.strides.back() == 1);
}

// An elementwise node the fused kernel can run as one step.
bool fusible(const ir::Node& n) {
  if (n.functional() || !n.writes().empty() || n.outputs().size() != 1 || !ops::is_fusible_pointwise(n.op_name()))
    return false;
  const ir::Value* out = n.output(0);
  if (!out->is_tensor() || !contiguous(out->type()) || out->type().sizes.empty() || out->type().numel() == 0)
    return false;
  return std::all_of(n.args().begin(), n.args().end(), [&](const ir::Arg& a) {
    if (a.kind == ir::Arg::Kind::Const) return !a.constant.is_list() && !a.constant.is_tensor();
    return a.kind == ir::Arg::Kind::Value && a.value->is_tensor() && tileable_operand(a.value->type(), out->type().sizes);
  });
}

struct Chain {
  std::vector<ir::Node*> members;
  bool merged = false;  // holds another group's members: sort by program order
};

}  // namespace

bool FusePointwise::run(ir::Graph& g) {
  std::vector<Chain> chains;
  // Open chains by the value their last node made: a later node that reads it
  // may extend the chain.
  std::unordered_map<const ir::Value*, size_t> open;
  for (ir::Node* n : g.nodes()) {
    if (is_effect(*n)) {
      open.clear();  // a write or a communication in between: the chains stop here
      continue;
    }
    if (!fusible(*n)) continue;
    const ir::Value* out = n->output(0);
    // n joins the group of every operand an open group made and only n reads
    // (a tree: the stencil's n + s and w + e meet in one add); the groups merge.
    std::optional<size_t> joined;
    for (const ir::Arg& a : n->args()) {
      if (a.kind != ir::Arg::Kind::Value) continue;
      auto it = open.find(a.value);
      if (it == open.end() || a.value->returned() > 0 || a.value->type().sizes != out->type().sizes) continue;
      const auto& uses = a.value->uses();
      if (!std::all_of(uses.begin(), uses.end(), [&](const ir::Use& u) { return u.user == n; })) continue;
      const size_t group = it->second;
      open.erase(it);
      if (!joined) {
        joined = group;
      } else if (group != *joined) {
        auto& into = chains[*joined].members;
        auto& from = chains[group].members;
        into.insert(into.end(), from.begin(), from.end());
        from.clear();
        chains[*joined].merged = true;
      }
    }
    if (!joined) {
      joined = chains.size();
      chains.emplace_back();
    }
    chains[*joined].members.push_back(n);
    open[out] = *joined;
  }
  // Merged groups list their members group by group: back to program order,
  // which is an order of their steps (each operand made before its reader).
  for (Chain& c : chains)
    if (c.merged)
      std::sort(c.members.begin(), c.members.end(),
                [&](const ir::Node* a, const ir::Node* b) { return g.position(a) < g.position(b); });

  // Each fused node takes its chain's last node's place in program order.
  std::vector<std::pair<std::vector<ir::Node*>, ir::Node*>> fused;  // (the chain, its fused node)
  for (const Chain& c : chains) {
    if (c.members.size() < 2) continue;
    fused.emplace_back(c.members,
                       make_fused_node(g, "symmflow::fused_pointwise", fused_program(c.members), *c.members.back()));
  }
  if (fused.empty()) return false;
  place_fused(g, fused);
  return true;
}

}  // namespace symmflow::passes
