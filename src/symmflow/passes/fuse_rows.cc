#include "symmflow/passes/fuse_rows.h"

#include <algorithm>
#include <cstdint>
#include <optional>

#include "symmflow/ops/fused_rows.h"
#include "symmflow/passes/dce.h"
#include "symmflow/passes/fused_groups.h"

namespace symmflow::passes {

namespace {

const IValue* constant_arg(const ir::Node& n, size_t i) {
  return i < n.args().size() && n.arg(i).kind == ir::Arg::Kind::Const ? &n.arg(i).constant : nullptr;
}

// A reduction over its input's last dim alone, keepdim, in the input's dtype.
bool reduces_last_dim(const ir::Node& n) {
  const IValue *dims = constant_arg(n, 1), *keepdim = constant_arg(n, 2);
  if (n.args().empty() || n.arg(0).kind != ir::Arg::Kind::Value || !dims || !dims->is_list() || !keepdim ||
      !keepdim->is_bool() || !keepdim->to_bool())
    return false;
  if (n.args().size() > 3 && !(constant_arg(n, 3) && constant_arg(n, 3)->is_none())) return false;
  const IValueList& d = dims->to_list();
  const auto rank = int64_t(n.arg(0).value->type().sizes.size());
  return rank >= 1 && d.size() == 1 && d[0].is_int() && (d[0].to_int() == -1 || d[0].to_int() == rank - 1);
}

// A node fused_rows can run as one step; its tensor operands are checked
// against the group's shape when it joins.
bool row_step(const ir::Node& n) {
  if (n.functional() || !n.writes().empty() || n.outputs().size() != 1) return false;
  const bool reduction = ops::is_row_reduction(n.op_name());
  if (!reduction && !ops::is_fusible_pointwise(n.op_name())) return false;
  if (reduction && !reduces_last_dim(n)) return false;
  const ir::Value* out = n.output(0);
  if (!out->is_tensor() || !contiguous(out->type()) || out->type().sizes.empty() || out->type().numel() == 0)
    return false;
  for (size_t i = 0; i < n.args().size(); ++i) {
    const ir::Arg& a = n.arg(i);
    if (reduction && i == 1) continue;  // the dims, checked above
    if (a.kind == ir::Arg::Kind::Const ? a.constant.is_list() || a.constant.is_tensor()
                                        : a.kind != ir::Arg::Kind::Value || !a.value->is_tensor())
      return false;
  }
  return true;
}

// Whether t is s's per-row shape [..., 1] (no allocation: the pass runs on every node).
bool is_per_row(const ir::Dims& t, const ir::Dims& s) {
  return t.size() == s.size() && !t.empty() && t.back() == 1 && std::equal(t.begin(), t.end() - 1, s.begin());
}

// The widest shape a node reads or makes.
const ir::Dims& widest(const ir::Node& n) {
  const ir::TensorType* w = &n.output(0)->type();
  for (const ir::Arg& a : n.args())
    if (a.kind == ir::Arg::Kind::Value && a.value->type().numel() > w->numel()) w = &a.value->type();
  return w->sizes;
}

// Whether every tensor n reads or makes fits a group whose widest shape is `s`
// (the blocks of ops/fused_rows.h take it).
bool fits(const ir::Node& n, const ir::Dims& s) {
  const ir::TensorType& out = n.output(0)->type();
  if (out.sizes != s && !is_per_row(out.sizes, s)) return false;
  return std::all_of(n.args().begin(), n.args().end(), [&](const ir::Arg& a) {
    if (a.kind != ir::Arg::Kind::Value) return true;
    const ir::TensorType& t = a.value->type();
    if (t.sizes == s || is_per_row(t.sizes, s)) return contiguous(t);
    if (t.numel() == 1) return true;
    const auto& d = t.sizes;
    const bool row = !d.empty() && d.back() == s.back() && std::all_of(d.begin(), d.end() - 1, [](int64_t x) { return x == 1; });
    return row && (t.strides.empty() || t.strides.back() == 1);
  });
}

struct Group {
  std::vector<ir::Node*> members;  // last to first while growing
  const ir::Dims* shape = nullptr;    // the widest shape (a value's type: the pass changes none until the end)
  bool reduces = false;
};

}  // namespace

bool FuseRows::run(ir::Graph& g) {
  // Only a group with a reduction is fused: without one in the graph there is
  // nothing to do, and no group need be built (every elementwise node of a
  // large graph would otherwise make one).
  if (std::none_of(g.nodes().begin(), g.nodes().end(),
                   [](const ir::Node* n) { return ops::is_row_reduction(n->op_name()) && reduces_last_dim(*n); }))
    return false;
  std::vector<Group> groups;
  // By position in program order, the group a node joined (kNone: none): a
  // vector, not a hash map, since every elementwise node of a 100k-node graph
  // passes through here.
  constexpr size_t kNone = SIZE_MAX;
  std::vector<size_t> group_of(g.size(), kNone);
  size_t open_from = 0;  // groups below this index met a write or a communication: closed
  const auto& nodes = g.nodes();
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    ir::Node* n = *it;
    if (is_effect(*n)) {
      open_from = groups.size();
      continue;
    }
    if (!row_step(*n)) continue;
    const ir::Value* out = n->output(0);
    const auto& uses = out->uses();
    std::optional<size_t> joined;
    if (out->returned() == 0 && !uses.empty()) {
      const size_t first = group_of[g.position(uses.front().user)];
      if (first != kNone && first >= open_from &&
          std::all_of(uses.begin(), uses.end(), [&](const ir::Use& u) { return group_of[g.position(u.user)] == first; })) {
        Group& grp = groups[first];
        // A group of per-row values alone widens to the rows they come from.
        const ir::Dims& own = widest(*n);
        const bool widens = own != *grp.shape && is_per_row(*grp.shape, own);
        if (fits(*n, widens ? own : *grp.shape)) {
          if (widens) grp.shape = &own;
          joined = first;
        }
      }
    }
    if (!joined) {
      const ir::Dims& own = widest(*n);
      if (!fits(*n, own)) continue;
      joined = groups.size();
      groups.push_back({{}, &own, false});
    }
    Group& grp = groups[*joined];
    grp.members.push_back(n);
    grp.reduces = grp.reduces || ops::is_row_reduction(n->op_name());
    group_of[g.position(n)] = *joined;
  }

  std::vector<std::pair<std::vector<ir::Node*>, ir::Node*>> fused;  // (the group, its fused node)
  for (Group& grp : groups) {
    if (grp.members.size() < 2 || !grp.reduces) continue;  // elementwise alone: fuse_pointwise's
    std::reverse(grp.members.begin(), grp.members.end());
    FusedProgram p = fused_program(grp.members);
    for (ops::FusedStep& s : p.steps)
      if (ops::is_row_reduction(s.op)) s.args[1].constant = IValue(std::vector<int64_t>{-1});  // [rank - 1] too
    ir::Node* node = make_fused_node(g, "symmflow::fused_rows", p, *grp.members.back());
    fused.emplace_back(std::move(grp.members), node);
  }
  if (fused.empty()) return false;
  place_fused(g, fused);
  return true;
}

}  // namespace symmflow::passes
