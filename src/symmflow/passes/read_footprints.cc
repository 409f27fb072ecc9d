#include "symmflow/passes/read_footprints.h"

#include <algorithm>
#include <utility>

#include "symmflow/passes/comm_ops.h"

namespace symmflow::passes {

using ir::Node;
using ir::Value;

namespace {

// A view op reads no element of the tensor it views: its users read what they use.
bool only_views(const Node& n, const Value* v) {
  if (n.functional() || !n.writes().empty() || comm_kind(n) != CommKind::none) return false;
  for (const Value* a : n.output_aliases())
    if (a == v) return true;
  return false;
}

}  // namespace

ReadFootprints::ReadFootprints(const ir::Graph& g, const std::vector<Value*>& roots)
    : roots_(roots), lineage_(g.num_values()) {
  for (size_t i = 0; i < lineage_.size(); ++i) lineage_[i] = int(i);
  auto unite = [&](const Value* a, const Value* b) {
    int x = lineage(a->id()), y = lineage(b->id());
    if (x != y) lineage_[size_t(x)] = y;
  };
  // Every version of a storage is one lineage: its views, the new values a
  // functional write makes of it, what an as_strided_scatter writes back into it
  // (and the value written), what an imperative write (an epilogue copy_) puts there.
  for (size_t i = 0; i < roots_.size(); ++i)
    if (roots_[i]) lineage_[i] = lineage(roots_[i]->id());
  // The values collectives and other ordered ops touch, marked by lineage once
  // every lineage is known; listed in the same sweep (on a 100k-node graph a
  // second sweep misses to memory on every node again).
  std::vector<int> ordered;
  for (const Node* n : g.nodes()) {
    const auto& slots = n->output_slots();
    for (size_t i = 0; i < slots.size(); ++i)
      if (slots[i] && n->functional()) unite(n->output(i), n->value_at(*slots[i]));
    if (n->schema().ns == "aten" && n->schema().name == "as_strided_scatter")
      for (size_t k : {0, 1})
        if (n->arg(k).kind == ir::Arg::Kind::Value) unite(n->output(0), n->arg(k).value);
    if (!n->functional())
      for (const auto& w : n->writes())
        for (const auto& a : n->args()) a.for_each_value([&](Value* v) { if (v->is_tensor()) unite(n->value_at(w), v); });
    const CommKind k = comm_kind(*n);
    if (k != CommKind::collective && k != CommKind::effect) continue;
    auto list = [&](const Value* v) { if (v->is_tensor()) ordered.push_back(v->id()); };
    for (const auto& a : n->args()) a.for_each_value(list);
    for (const Value* o : n->outputs()) list(o);
  }
  ordered_lineage_.assign(lineage_.size(), false);
  for (int id : ordered) ordered_lineage_[size_t(lineage(id))] = true;
}

int ReadFootprints::lineage(int id) const {
  size_t i = size_t(id);
  while (lineage_[i] != int(i)) i = size_t(lineage_[i] = lineage_[size_t(lineage_[i])]);
  return int(i);
}

void ReadFootprints::add(int cls, size_t pos, const Node* reader, const Value* v) {
  if (lists_.size() <= size_t(cls)) lists_.resize(size_t(cls) + 1);
  List& l = lists_[size_t(cls)];
  const int i = int(reads_.size());
  reads_.push_back({pos, reader, v, -1});
  (l.last < 0 ? l.first : reads_[size_t(l.last)].next) = i;
  l.last = i;
}

void ReadFootprints::merge(int into, int from) {
  if (lists_.size() <= size_t(std::max(into, from))) lists_.resize(size_t(std::max(into, from)) + 1);
  auto& a = lists_[size_t(into)];
  auto& b = lists_[size_t(from)];
  if (b.first < 0) return;
  (a.last < 0 ? a.first : reads_[size_t(a.last)].next) = b.first;
  a.last = b.last;
  b = List{};
}

void ReadFootprints::relocate(const Value* root, const Value* target) {
  if (moved_to_.size() <= size_t(root->id())) moved_to_.resize(size_t(root->id()) + 1, nullptr);
  moved_to_[size_t(root->id())] = target;
  if (!(root->type() == target->type())) moved_from_.emplace(root, root->type());
}

const Value* ReadFootprints::root(const Value* v) const {
  const size_t i = size_t(v->id());
  return i < roots_.size() && roots_[i] ? roots_[i] : v;
}

ReadFootprints::Place ReadFootprints::place(const Value* v) const {
  const Value* r = root(v);
  const Value* target = size_t(r->id()) < moved_to_.size() ? moved_to_[size_t(r->id())] : nullptr;
  if (!target) return {r, ir::ViewExtent(v->type())};
  auto it = moved_from_.find(r);
  const ir::TensorType& before = it == moved_from_.end() ? target->type() : it->second;
  ir::ViewExtent e(v == r ? before : v->type());
  const ir::ViewExtent from(before);
  Place to = place(target);
  // Same strides: v's elements sit where they sat, shifted by where the buffer
  // went. Otherwise only "somewhere in the target" is known.
  if (from.sizes == to.extent.sizes && from.strides == to.extent.strides) {
    e.offset += to.extent.offset - from.offset;
    return {to.root, std::move(e)};
  }
  return to;
}

bool ReadFootprints::decides(const Value* target) const {
  const size_t i = size_t(target->id());
  return i < lineage_.size() && !ordered_lineage_[size_t(lineage(int(i)))];
}

bool ReadFootprints::share_bytes(const Value* a, const Value* b) const {
  const Place pa = place(a), pb = place(b);
  return pa.root != pb.root || views_share_bytes(pa.extent.view(), pb.extent.view());
}

bool ReadFootprints::read_after(int cls, size_t pos, const std::function<bool(const Node*)>& skip,
                                const Value* target) const {
  if (size_t(cls) >= lists_.size()) return false;
  const Place t = place(target);
  for (int i = lists_[size_t(cls)].first; i >= 0; i = reads_[size_t(i)].next) {
    const Read& r = reads_[size_t(i)];
    if (r.pos <= pos || (r.reader && (skip(r.reader) || only_views(*r.reader, r.value)))) continue;
    const Place p = place(r.value);
    if (p.root != t.root || views_share_bytes(p.extent.view(), t.extent.view())) return true;
  }
  return false;
}

}  // namespace symmflow::passes
