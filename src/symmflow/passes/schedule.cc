#include "symmflow/passes/schedule.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <span>
#include <unordered_map>
#include <unordered_set>

#include "symmflow/ir/alias.h"
#include "symmflow/library/dispatcher.h"
#include "symmflow/passes/comm_ops.h"

namespace symmflow::passes {

using ir::Node;
using ir::Value;

namespace {

bool is_tensor_value(const Value* v) { return v && v->is_tensor(); }

// Gives every collective result a c10d::wait_tensor and makes every later use
// read the wait's result, so that the executor may run the collective
// asynchronously. A wait that exists already but comes after another use of the
// result moves up to just after the collective. Linear: a result's first wait
// and its other uses come from its def-use list, and the order is rebuilt once.
bool add_waits(ir::Graph& g) {
  Operator& wait_op = Dispatcher::instance().get("c10d::wait_tensor");
  const std::vector<Node*> order = g.nodes();
  std::unordered_map<const Node*, std::vector<Node*>> waits_after;  // placed right after the node
  std::unordered_set<const Node*> moved;
  bool replaced = false;
  for (Node* n : order) {
    if (comm_kind(*n) != CommKind::collective) continue;
    for (Value* o : n->outputs()) {
      if (!o->is_tensor()) continue;
      // The first wait on o, and whether o is read before it by anything else.
      Node* wait = nullptr;
      size_t wait_at = order.size(), first_use = order.size();
      for (const ir::Use& u : o->uses()) {
        const size_t at = g.position(u.user);
        first_use = std::min(first_use, at);
        if (at < wait_at && comm_kind(*u.user) == CommKind::wait && u.user->arg(0).value == o) {
          wait = u.user;
          wait_at = at;
        }
      }
      const bool used_before = first_use < wait_at;
      if (!wait || used_before) {
        if (wait) {
          moved.insert(wait);
        } else {
          wait = g.make_node(wait_op, {ir::Arg(o)}, false, n->loc());
          g.name_after(wait->output(0), o);
        }
        auto& after = waits_after[n];
        after.insert(after.begin(), wait);  // the last result's wait comes first
      }
      // Later uses of o itself would read it before the wait in a schedule
      // that delays the wait: they read the wait's result instead.
      replaced |= g.replace_uses(o, wait->output(0), [&](const Node* u) { return u != wait; }) > 0;
    }
  }
  if (waits_after.empty()) return replaced;
  std::vector<Node*> out;
  out.reserve(order.size() + waits_after.size());
  for (Node* n : order) {
    if (moved.count(n)) continue;
    out.push_back(n);
    if (auto it = waits_after.find(n); it != waits_after.end())
      out.insert(out.end(), it->second.begin(), it->second.end());
  }
  g.set_order(std::move(out));
  return true;
}

// Bytes of a storage one value covers, for rule 2.
struct Access {
  int node;
  int64_t lo, hi;
  bool write;
};

// What a node reads and writes, by storage root (views read nothing: they only
// make a new geometry).
using NodeAccesses = std::vector<std::pair<const Value*, Access>>;

// The bytes of v's storage that node idx reads or writes, when v has a storage.
void add_access(NodeAccesses& acc, const Value* v, int idx, bool write, const std::vector<Value*>& roots) {
  if (!is_tensor_value(v) || !roots[size_t(v->id())]) return;
  const auto [lo, hi] = v->type().byte_extent();
  acc.push_back({roots[size_t(v->id())], Access{idx, lo, hi, write}});
}

// Appends node idx's accesses to acc (every node's go into one list).
void add_accesses_of(NodeAccesses& acc, const Node& n, int idx, const std::vector<Value*>& roots) {
  auto add = [&](const Value* v, bool write) { add_access(acc, v, idx, write, roots); };
  if (comm_kind(n) == CommKind::wait || is_pure_view(n)) return;
  for (const auto& a : n.args()) a.for_each_value([&](Value* v) { add(v, false); });
  if (!n.functional())
    for (const auto& w : n.writes()) add(n.value_at(w), true);
  for (const Value* o : n.outputs())
    if (is_tensor_value(o) && roots[size_t(o->id())] == o) add(o, true);  // fresh results
}

// The bytes one P2P entry uses until its wait: its handle is its tensor (same
// storage, same view), read by a send, written by a receive.
NodeAccesses p2p_entry_access(const Node& start, const Value* handle, int idx, const std::vector<Value*>& roots) {
  bool recv = start.schema().name == "irecv_";
  if (start.schema().name == "batch_isend_irecv") {
    const ir::Arg& kinds = start.arg(0);  // op_types: a list literal, or one constant list
    const size_t e = size_t(handle->output_index());
    if (kinds.kind == ir::Arg::Kind::List)
      recv = e < kinds.elems.size() && kinds.elems[e].constant.to_string() == "irecv";
    else
      recv = kinds.constant.to_string_list().at(e) == "irecv";
  }
  NodeAccesses acc;
  add_access(acc, handle, idx, recv, roots);
  return acc;
}

// What the three steps below share: the nodes in program order, their kinds
// (asked once: list scheduling asks per ready node per step), the start/wait
// pairs and the storage roots.
struct ScheduleInput {
  const ir::Graph& g;
  std::vector<Node*> nodes;
  std::vector<CommKind> kinds;
  AsyncPairs pairs;
  std::vector<Value*> roots;

  explicit ScheduleInput(const ir::Graph& graph)
      : g(graph), nodes(graph.nodes()), pairs(async_pairs(graph)), roots(ir::storage_roots(graph)) {
    kinds.reserve(nodes.size());
    for (const Node* n : nodes) kinds.push_back(comm_kind(*n));
  }
  int size() const { return int(nodes.size()); }
  int index_of(const Node* x) const { return int(g.position(x)); }
  CommKind kind(int i) const { return kinds[size_t(i)]; }
  bool is_start(int i) const { return issues_comm(kind(i)); }
  bool is_wait(int i) const { return kind(i) == CommKind::wait; }
  // The start a wait belongs to; -1 for a wait on nothing in flight.
  int start_index(int w) const {
    auto it = pairs.start_of.find(nodes[size_t(w)]);
    return it == pairs.start_of.end() ? -1 : index_of(it->second);
  }
};

// The order eager runs things in: a collective completes at its node, so its
// waits take its place; a P2P wait stays where the program waits.
std::vector<int> eager_order(const ScheduleInput& in) {
  std::vector<int> eager;
  std::vector<bool> placed(size_t(in.size()), false);
  for (int i = 0; i < in.size(); ++i) {
    if (placed[size_t(i)]) continue;
    eager.push_back(i);
    if (in.kind(i) != CommKind::collective) continue;
    if (auto it = in.pairs.waits_of.find(in.nodes[size_t(i)]); it != in.pairs.waits_of.end())
      for (const Node* w : it->second) {
        eager.push_back(in.index_of(w));
        placed[size_t(in.index_of(w))] = true;
      }
  }
  return eager;
}

struct Dependencies {
  std::vector<std::vector<int>> succ;
  std::vector<int> npred;
};

// The edges of rules 1, 2 and 4, found walking the nodes in eager order.
Dependencies dependencies(const ScheduleInput& in, const std::vector<int>& eager) {
  const size_t count = size_t(in.size());
  std::unordered_map<const Value*, int> wait_of_handle;  // P2P handles
  for (const auto& [w, st] : in.pairs.start_of)
    if (comm_kind(*st) == CommKind::p2p) wait_of_handle[w->arg(0).value] = in.index_of(w);

  Dependencies d{std::vector<std::vector<int>>(count), std::vector<int>(count, 0)};
  auto edge = [&](int a, int b) {
    if (a == b) return;
    auto& s = d.succ[size_t(a)];
    if (std::find(s.begin(), s.end(), b) != s.end()) return;
    s.push_back(b);
    ++d.npred[size_t(b)];
  };
  // Every node's own accesses, in one list: node i's are own[range[i].first,
  // range[i].second). Listed in the walk below, as it reaches the node, rather
  // than in a sweep of their own before it: a node's arguments, results and
  // their types are then read once while in cache (on a 100k-node graph a
  // second sweep misses to memory on each of them again). A wait's start, whose
  // accesses it takes, comes before it in eager order.
  NodeAccesses own;
  own.reserve(count * 2);
  std::vector<std::pair<size_t, size_t>> range(count, {0, 0});
  auto own_of = [&](size_t i) {
    return std::span(own).subspan(range[i].first, range[i].second - range[i].first);
  };
  std::vector<std::vector<Access>> seen(in.g.num_values());  // by root's id, in eager order
  int last_comm = -1;
  for (int i : eager) {
    const Node* node = in.nodes[size_t(i)];
    const bool waits = in.is_wait(i);
    range[size_t(i)].first = own.size();
    add_accesses_of(own, *node, i, in.roots);
    range[size_t(i)].second = own.size();
    for (const auto& a : node->args())
      a.for_each_value([&](Value* v) {
        if (v->producer()) edge(in.index_of(v->producer()), i);
        // A P2P handle is read only after its wait (even a send's, whose bytes
        // are the send buffer's: the executor's contract, passes/comm_ops.h).
        if (auto it = wait_of_handle.find(v); !waits && it != wait_of_handle.end()) edge(it->second, i);
      });
    // A wait holds its start's window: the bytes the start reads and writes, or
    // for a P2P entry, that entry's own tensor (each entry has its wait).
    std::span<const std::pair<const Value*, Access>> acc = own_of(size_t(i));
    NodeAccesses entry;
    if (auto it = in.pairs.start_of.find(node); it != in.pairs.start_of.end()) {
      acc = own_of(size_t(in.index_of(it->second)));
      if (comm_kind(*it->second) == CommKind::p2p) {
        entry = p2p_entry_access(*it->second, node->arg(0).value, i, in.roots);
        acc = entry;
      }
    }
    for (const auto& [root, a] : acc) {
      auto& prior = seen[size_t(root->id())];
      for (const Access& b : prior)
        if ((a.write || b.write) && a.lo < b.hi && b.lo < a.hi) edge(b.node, i);
    }
    for (const auto& ra : acc) {
      const auto& [root, a] = ra;
      const auto& w = a;  // named for the lambda below (clang cannot capture a structured binding)
      auto& prior = seen[size_t(root->id())];
      // A write orders everything before it on the bytes it covers: those
      // accesses need no edge of their own from later nodes (keeps chains of
      // in-place ops on one buffer linear).
      if (a.write)
        std::erase_if(prior, [&](const Access& b) { return b.node != i && w.lo <= b.lo && b.hi <= w.hi; });
      prior.push_back(Access{i, a.lo, a.hi, a.write});
    }
    if (in.is_start(i)) {
      if (last_comm >= 0) edge(last_comm, i);
      last_comm = i;
    }
    if (waits && last_comm >= 0) edge(last_comm, i);  // rule 6 (starts are chained: the last one is enough)
  }
  return d;
}

// List scheduling (rule 5 and the choice among ready nodes): the new order.
std::vector<Node*> list_schedule(const ScheduleInput& in, const std::vector<int>& eager, Dependencies d,
                                 const ScheduleOptions& o) {
  const int n = in.size();
  const size_t count = size_t(n);
  std::vector<int> eager_pos(count);
  for (int p = 0; p < n; ++p) eager_pos[size_t(eager[size_t(p)])] = p;
  std::vector<int> ready;
  for (int i = 0; i < n; ++i)
    if (d.npred[size_t(i)] == 0) ready.push_back(i);
  std::vector<int> open_waits(count, 0);  // per start: waits not yet scheduled
  std::vector<int> in_flight;             // starts, oldest first
  std::vector<Node*> out;
  auto pick = [&](auto pred) {
    int best = -1;
    for (int i : ready)
      if (pred(i) && (best < 0 || eager_pos[size_t(i)] < eager_pos[size_t(best)])) best = i;
    return best;
  };
  auto is_start = [&](int i) { return in.is_start(i); };
  auto is_wait = [&](int i) { return in.is_wait(i); };
  auto is_compute = [&](int i) { return !is_start(i) && !is_wait(i); };
  auto oldest_wait = [&] {
    for (int s : in_flight)
      for (int i : ready)
        if (in.start_index(i) == s && is_wait(i)) return i;
    return pick(is_wait);
  };
  // Once the schedule has to block on one wait of an op, the op's other waits
  // come along at once: its entries finish together, and compute that needs only
  // one of them would otherwise run first and hold back the next start, which
  // needs them all (a ring step sends on what it just received).
  int draining = -1;
  auto forced_wait = [&](int w) {
    if (w >= 0) draining = in.start_index(w);
    return w;
  };
  while (!ready.empty()) {
    int c = -1;
    if (draining >= 0) {
      c = pick([&](int i) { return is_wait(i) && in.start_index(i) == draining; });
      if (c < 0) draining = -1;
    }
    if (c < 0 && !o.overlap) c = pick(is_wait);
    if (c < 0) {
      int s = pick(is_start);
      if (s >= 0 && int(in_flight.size()) >= o.max_in_flight && in.pairs.waits_of.count(in.nodes[size_t(s)]))
        c = forced_wait(oldest_wait());
      if (c < 0) c = s;  // no wait may run before it (rule 6): the program itself has that many in flight
    }
    if (c < 0) c = pick(is_compute);
    if (c < 0) c = forced_wait(oldest_wait());
    SF_CHECK(c >= 0, "schedule @{}: no node can run next (a dependency cycle)", in.g.name());
    ready.erase(std::find(ready.begin(), ready.end(), c));
    out.push_back(in.nodes[size_t(c)]);
    if (auto it = in.pairs.waits_of.find(in.nodes[size_t(c)]); it != in.pairs.waits_of.end()) {
      open_waits[size_t(c)] = int(it->second.size());
      in_flight.push_back(c);
    }
    if (int s = in.start_index(c); s >= 0) {
      if (--open_waits[size_t(s)] == 0) in_flight.erase(std::find(in_flight.begin(), in_flight.end(), s));
    }
    for (int s : d.succ[size_t(c)])
      if (--d.npred[size_t(s)] == 0) ready.push_back(s);
  }
  SF_CHECK(int(out.size()) == n, "schedule @{}: {} of {} nodes could not be ordered (a dependency cycle)",
           in.g.name(), n - int(out.size()), n);
  return out;
}

}  // namespace

// Waits after every collective; then eager order, its dependencies, and a list
// schedule over them.
bool Schedule::run(ir::Graph& g) {
  bool changed = add_waits(g);
  const ScheduleInput in(g);
  const std::vector<int> eager = eager_order(in);
  std::vector<Node*> out = list_schedule(in, eager, dependencies(in, eager), o_);
  changed |= out != in.nodes;
  g.set_order(std::move(out));
  return changed;
}

}  // namespace symmflow::passes
