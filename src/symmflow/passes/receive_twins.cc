#include "symmflow/passes/receive_twins.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "symmflow/core/overlap.h"
#include "symmflow/ir/alias.h"
#include "symmflow/library/dispatcher.h"
#include "symmflow/passes/comm_ops.h"

namespace symmflow::passes {

using ir::Arg;
using ir::Node;
using ir::TensorType;
using ir::Value;

namespace {

bool same_layout(const TensorType& a, const TensorType& b) {
  return a.sizes == b.sizes && a.full_strides() == b.full_strides() && a.offset == b.offset;
}

bool share_bytes(const TensorType& a, const TensorType& b) {
  return views_share_bytes(ir::ViewExtent(a).view(), ir::ViewExtent(b).view());
}

// aten::as_strided(base, sizes, strides, offset), not yet in program order.
Node* make_view(ir::Graph& g, Value* base, const Shape& sizes, const Shape& strides, int64_t offset,
                ir::SourceLoc loc) {
  Operator& op = Dispatcher::instance().get("aten::as_strided");
  return g.make_node(op, {Arg(base), Arg(IValue(sizes)), Arg(IValue(strides)), Arg(IValue(offset))}, false, loc);
}

// One received region: the layout a receive writes, where it is first
// received, and its bytes (a row is one run, a column one run per element).
struct Region {
  TensorType type;
  size_t first = 0;
  ByteRuns bytes;
};

int64_t covered_bytes(const ByteRuns& runs) {
  int64_t n = 0;
  for (const auto& [b, e] : runs) n += e - b;
  return n;
}

// The copies back: regions of one layout at equal distances become one view
// with a leading dim (halo2d's top and bottom rows), the others one each.
std::vector<std::pair<Shape, std::pair<Shape, int64_t>>> copy_back_views(std::vector<Region> regions) {
  std::map<std::pair<Shape, Shape>, std::vector<int64_t>> by_layout;
  for (const Region& r : regions) by_layout[{r.type.sizes.to_vector(), r.type.full_strides()}].push_back(r.type.offset);
  std::vector<std::pair<Shape, std::pair<Shape, int64_t>>> out;  // (sizes, (strides, offset))
  for (auto& [layout, offsets] : by_layout) {
    std::sort(offsets.begin(), offsets.end());
    const int64_t d = offsets.size() > 1 ? offsets[1] - offsets[0] : 0;
    bool even = offsets.size() > 1 && d > 0;
    for (size_t i = 1; i < offsets.size(); ++i) even = even && offsets[i] - offsets[i - 1] == d;
    if (even) {
      Shape sizes = layout.first, strides = layout.second;
      sizes.insert(sizes.begin(), int64_t(offsets.size()));
      strides.insert(strides.begin(), d);
      out.push_back({sizes, {strides, offsets[0]}});
    } else {
      for (int64_t o : offsets) out.push_back({layout.first, {layout.second, o}});
    }
  }
  return out;
}

// Rewrites the uses of x's received rows onto a twin; false (nothing changed)
// when x does not qualify (receive_twins.h).
bool twin_input(ir::Graph& g, Value* x, const std::vector<Value*>& roots) {
  auto rooted = [&](const Value* v) { return v->is_tensor() && size_t(v->id()) < roots.size() && roots[size_t(v->id())] == x; };
  const auto& nodes = g.nodes();
  // In program order, so regions.front() holds the first receive.
  std::vector<Region> regions;
  for (size_t p = 0; p < nodes.size(); ++p) {
    for (const Value* v : ir::receive_buffers(*nodes[p])) {
      if (!rooted(v)) continue;
      auto same = std::find_if(regions.begin(), regions.end(), [&](const Region& r) { return same_layout(r.type, v->type()); });
      if (same != regions.end()) continue;
      // A region a peer writes in place (a row, a column: ir::p2p_addressable),
      // whose elements do not overlap (its bytes are exactly nbytes).
      auto runs = view_byte_runs(ir::ViewExtent(v->type()).view());
      if (!runs || !ir::p2p_addressable(v->type()) || covered_bytes(*runs) != v->type().nbytes()) return false;
      for (const Region& r : regions)
        if (share_bytes(r.type, v->type())) return false;
      regions.push_back({v->type(), p, std::move(*runs)});
    }
  }
  if (regions.empty()) return false;
  // Received whole (ring_overlap's buffers): placement's own rule costs the same
  // one copy back with no twin (its bytes are overwritten before any read).
  int64_t received = 0;
  for (const Region& r : regions) received += r.type.nbytes();
  if (received >= x->type().nbytes()) return false;
  for (const Value* o : g.outputs())
    if (rooted(o)) return false;
  const size_t first = regions.front().first;
  auto shares_a_region = [&](const TensorType& t) {
    return std::any_of(regions.begin(), regions.end(), [&](const Region& r) { return share_bytes(r.type, t); });
  };
  // Which region holds every byte of a view (nullopt: none). By bytes, not
  // spans: the span of a column holds the columns beside it too.
  auto region_of = [&](const TensorType& t) -> std::optional<size_t> {
    const auto runs = view_byte_runs(ir::ViewExtent(t).view());
    if (!runs) return std::nullopt;
    for (size_t i = 0; i < regions.size(); ++i)
      if (runs_cover(regions[i].bytes, *runs)) return i;
    return std::nullopt;
  };
  // The uses to move onto the twin: (node, value).
  std::vector<std::pair<Node*, Value*>> moves;
  for (size_t p = 0; p < nodes.size(); ++p) {
    Node* n = nodes[p];
    bool touches = false;
    for (const auto& a : n->args()) a.for_each_value([&](Value* v) { touches = touches || rooted(v); });
    if (!touches) continue;
    if (issues_comm(*n) && comm_kind(*n) != CommKind::p2p) return false;  // a collective wants x itself symmetric
    if (!is_builtin_op(*n)) return false;                                  // opaque: it may touch any byte
    if (p < first || is_pure_view(*n)) continue;  // the old bytes; a view reads nothing itself
    std::vector<Value*> seen;
    bool ok = true;
    for (const auto& a : n->args())
      a.for_each_value([&](Value* v) {
        if (!ok || !rooted(v) || std::find(seen.begin(), seen.end(), v) != seen.end()) return;
        seen.push_back(v);
        if (!shares_a_region(v->type())) return;
        // A P2P op's handle (what wait_tensor waits on) follows its buffer,
        // which moves with the op's own operand: the wait keeps its handle.
        if (v->producer() && comm_kind(*v->producer()) == CommKind::p2p) return;
        auto r = region_of(v->type());
        bool received_here = false, written = false;
        for (const auto& w : n->writes()) {
          if (n->value_at(w) != v) continue;
          (comm_kind(*n) == CommKind::p2p ? received_here : written) = true;
        }
        // Inside one region, after that region is received (or the receive
        // itself), and not written by anything else.
        ok = r && !written && (p > regions[*r].first || received_here);
        if (ok) moves.push_back({n, v});
      });
    if (!ok) return false;
  }

  // The twin right after the last access of a received row before the first
  // receive (at the top when there is none): as early as it may be, so that it
  // holds back neither the first receive's start nor compute the scheduler
  // would overlap with it (program order breaks ties among compute). The views
  // of it right after.
  size_t at = 0;
  for (size_t p = 0; p < first; ++p) {
    const Node* n = nodes[p];
    if (is_pure_view(*n)) continue;
    bool touches = false;
    for (const auto& a : n->args())
      a.for_each_value([&](Value* v) { touches = touches || (rooted(v) && shares_a_region(v->type())); });
    if (touches) at = p + 1;
  }
  Node* before = nodes[at];
  Operator& twin_op = Dispatcher::instance().get("symmflow::receive_twin");
  // The received rows as views of x, which the twin is declared to write: the
  // accesses of those rows before it stay before it; x's other rows are free.
  std::vector<Arg> written;
  for (const Region& r : regions) {
    Node* view = make_view(g, x, r.type.sizes.to_vector(), r.type.full_strides(), r.type.offset, before->loc());
    g.insert_before(before, view);
    written.emplace_back(view->output(0));
  }
  Node* twin = g.make_node(twin_op, {Arg(x), Arg::list(std::move(written))}, false, before->loc());
  g.insert_before(before, twin);
  Value* t = twin->output(0);
  g.name_after(t, x);
  std::map<Value*, Value*> on_twin;
  for (auto& [n, v] : moves) {
    if (on_twin.count(v)) continue;
    Node* view = make_view(g, t, v->type().sizes.to_vector(), v->type().full_strides(), v->type().offset, v->producer() ? v->producer()->loc() : before->loc());
    g.insert_before(before, view);
    g.name_after(view->output(0), v);
    on_twin[v] = view->output(0);
  }
  for (auto& [n, v] : moves) g.map_operands(n, [&](Value* u) { return u == v ? on_twin[v] : u; });
  // The received rows back into x, after everything else.
  Operator& copy = Dispatcher::instance().get("aten::copy_");
  for (const auto& [sizes, layout] : copy_back_views(regions)) {
    const auto& [strides, offset] = layout;
    Node* dst = make_view(g, x, sizes, strides, offset, {});
    Node* src = make_view(g, t, sizes, strides, offset, {});
    g.append(dst);
    g.append(src);
    Node* c = g.make_node(copy, {Arg(dst->output(0)), Arg(src->output(0)), Arg(IValue(false))}, false, {});
    c->set_origin(ir::NodeOrigin::received_back,
                  fmt::format("copy: the rows or columns P2P received into graph input %{} are copied back from its symmetric "
                              "twin %{} (not when the caller passes %{} symmetric: the twin is then %{} itself)",
                              x->name(), t->name(), x->name(), x->name()));
    g.append(c);
  }
  // Views of x nobody reads any more.
  for (size_t p = g.size(); p-- > 0;) {
    Node* n = g.nodes()[p];
    if (!is_pure_view(*n)) continue;
    bool dead = true;
    for (const Value* o : n->outputs()) dead = dead && o->uses().empty() && o->returned() == 0;
    if (dead && rooted(n->output(0))) g.remove(n);
  }
  g.refresh_layouts();
  return true;
}

}  // namespace

bool ReceiveTwins::run(ir::Graph& g) {
  // Most programs receive nothing: then no walk of the storage roots either.
  if (std::none_of(g.nodes().begin(), g.nodes().end(), [](const Node* n) { return comm_kind(*n) == CommKind::p2p; }))
    return false;
  bool changed = false;
  auto roots = ir::storage_roots(g);
  for (Value* x : std::vector<Value*>(g.inputs())) {
    if (!x->is_tensor() || !twin_input(g, x, roots)) continue;
    changed = true;
    roots = ir::storage_roots(g);  // the rewrite added values
  }
  return changed;
}

}  // namespace symmflow::passes
