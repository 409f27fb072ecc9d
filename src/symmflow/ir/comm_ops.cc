#include "symmflow/ir/comm_ops.h"

#include <algorithm>
#include <unordered_set>

#include "symmflow/core/compact_layout.h"
#include "symmflow/core/overlap.h"

namespace symmflow::ir {

bool is_builtin_op(const Node& n) {
  const auto& ns = n.schema().ns;
  return ns == "aten" || ns == "c10d" || ns == "symm_mem" || ns == "symmflow";
}

std::vector<Value*> receive_buffers(const Node& n) {
  std::vector<Value*> out;
  if (comm_kind(n) == CommKind::p2p)
    for (const auto& w : n.writes()) out.push_back(n.value_at(w));
  return out;
}

std::string group_of(const Node& n) {
  auto i = n.schema().argument_index("group_name");
  if (!i || !n.arg(*i).constant.is_string()) return "";
  return n.arg(*i).constant.to_string();
}

CommKind comm_kind(const Node& n) {
  const auto& s = n.schema();
  // aten first: nearly every node is compute (Node::has_effects: not aten).
  if (s.ns == "aten") return CommKind::none;
  if (s.ns == "c10d") {
    if (s.name == "wait_tensor") return CommKind::wait;
    if (s.name == "isend" || s.name == "irecv_" || s.name == "batch_isend_irecv") return CommKind::p2p;
    return CommKind::collective;
  }
  return n.has_effects() ? CommKind::effect : CommKind::none;
}

bool is_symm_mem_collective(const Node& n) {
  return n.schema().ns == "symm_mem" && n.schema().argument_index("group_name").has_value();
}

bool is_pure_view(const Node& n) {
  if (comm_kind(n) != CommKind::none || n.functional() || !n.writes().empty()) return false;
  const size_t outs = n.output_slots().size();
  for (size_t i = 0; i < outs; ++i)
    if (!n.output_alias(i)) return false;
  return outs > 0;
}

bool moves_without_staging(const Value& v, const std::vector<Value*>& roots) {
  const Value* r = roots[size_t(v.id())];
  const auto& t = v.type();
  return r && (r->symmetric() || !r->producer()) && p2p_addressable(t);
}

bool one_run(const TensorType& t) { return t.strides.empty() || numel_of(t.sizes) <= 1 || is_one_run(t.sizes, t.strides); }

bool p2p_addressable(const TensorType& t) {
  // An empty buffer moves no bytes: the runtime completes it as a put.
  return numel_of(t.sizes) <= 1 || compact_layout(t.sizes, t.strides, element_size(t.dtype)).has_value();
}

std::vector<int64_t> int_list_at(const Arg& a, int64_t rank, int64_t world) {
  if (a.kind != Arg::Kind::List) return a.constant.to_int_list();
  std::vector<int64_t> out;
  for (const Arg& e : a.elems)
    out.push_back(e.kind == Arg::Kind::Expr ? e.expr->eval(rank, world) : e.constant.to_int());
  return out;
}

std::vector<bool> rendezvous_sends(const Graph& g, const Node& n, const std::vector<Value*>& roots) {
  if (g.rank_set() || n.schema().name != "batch_isend_irecv") return {};
  const auto kinds = n.arg(0).constant.to_string_list();
  const auto peers = int_list_at(n.arg(1), g.rank(), g.world());
  const auto tags = int_list_at(n.arg(2), g.rank(), g.world());
  std::vector<const Value*> tensors;
  n.arg(3).for_each_value([&](const Value* v) { tensors.push_back(v); });
  if (tensors.size() != kinds.size()) return {};
  auto direct = [&](const Value* v) { return moves_without_staging(*v, roots); };
  std::vector<bool> out(kinds.size(), false);
  for (size_t i = 0; i < kinds.size(); ++i) {
    if (kinds[i] != "isend") continue;
    const auto peer_peers = int_list_at(n.arg(1), peers[i], g.world());
    for (size_t j = 0; j < kinds.size(); ++j)
      if (kinds[j] == "irecv" && tags[j] == tags[i] && peer_peers[j] == g.rank() &&
          (direct(tensors[i]) || direct(tensors[j])))
        out[i] = true;
  }
  return out;
}

AsyncPairs async_pairs(const Graph& g) {
  AsyncPairs p;
  std::unordered_set<const Value*> waited;
  for (const Node* n : g.nodes()) {
    if (comm_kind(*n) != CommKind::wait || n->arg(0).kind != Arg::Kind::Value) continue;
    const Value* h = n->arg(0).value;
    const Node* s = h->producer();
    if (!s || !waited.insert(h).second) continue;
    CommKind k = comm_kind(*s);
    if (k != CommKind::p2p && k != CommKind::collective) continue;
    p.start_of[n] = s;
    p.waits_of[s].push_back(n);
  }
  return p;
}

}  // namespace symmflow::ir
