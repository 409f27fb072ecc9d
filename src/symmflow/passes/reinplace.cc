#include "symmflow/passes/reinplace.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <utility>

#include "symmflow/ir/alias.h"
#include "symmflow/library/dispatcher.h"
#include "symmflow/passes/comm_ops.h"
#include "symmflow/passes/functionalize.h"
#include "symmflow/passes/read_footprints.h"

namespace symmflow::passes {

using ir::Arg;
using ir::Node;
using ir::Value;

namespace {

constexpr size_t kEnd = std::numeric_limits<size_t>::max();

bool is_epilogue_copy(const Node& n, const ir::Graph&) { return n.origin() == ir::NodeOrigin::epilogue; }

// Same dtype and sizes: the in-place op computes the same values (no promotion,
// no broadcasting of self); the layout is may_write_in_place's business.
bool same_values(const Value* a, const Value* b) {
  return a->type().dtype == b->type().dtype && a->type().sizes == b->type().sizes;
}

bool is_view_node(const Node& n) { return n.has_output_alias(); }

// A broadcast view (a dim of size > 1 with stride 0: autograd's expand of a
// loss's gradient) holds several elements at one address: an op cannot write it
// (PyTorch's internal-overlap rule, core/overlap.h).
bool repeats_elements(const Value* v) {
  return internal_overlap(ir::ViewExtent(v->type()).view()) == InternalOverlap::yes;
}

// The last reads of a storage class, newest first, by the reader's position (a
// node's position names it for the whole pass; kEnd: the end of the program; 0:
// no read): three distinct readers are enough to answer "is it read after n, not
// counting n and one scatter". Inline, not a heap vector per class: the pass
// reads one per value, and on a 100k-node graph scattered vectors miss the cache.
struct LastReads {
  std::array<size_t, 3> top{};  // descending, 0 where fewer than three
  void add(size_t pos) {
    if (pos <= top[2] || std::find(top.begin(), top.end(), pos) != top.end()) return;
    top[2] = pos;
    for (size_t i = 2; i > 0 && top[i] > top[i - 1]; --i) std::swap(top[i], top[i - 1]);
  }
  void merge(const LastReads& o) {
    for (size_t t : o.top)
      if (t) add(t);
  }
  // Is the class read at the end (a graph output, an input the program keeps)?
  bool read_at_end() const { return top[0] == kEnd; }
  // The newest read by a node other than those at positions a and b (0 when
  // none; kEnd for "the end", which no node is).
  size_t newest_except(size_t a, size_t b) const {
    for (size_t t : top)
      if (t == kEnd || (t != a && t != b)) return t;
    return 0;
  }
};

// Each value's readers in program order, in one array (CSR): reinplace's
// question "does a scatter or a wait read this result" walks them.
class Users {
 public:
  // (value id, reader) pairs in program order.
  Users(size_t num_values, const std::vector<std::pair<int, Node*>>& reads) : first_(num_values + 1, 0) {
    for (const auto& r : reads) ++first_[size_t(r.first) + 1];
    for (size_t v = 0; v < num_values; ++v) first_[v + 1] += first_[v];
    users_.resize(reads.size());
    std::vector<uint32_t> next(first_.begin(), first_.end() - 1);
    for (const auto& r : reads) users_[next[size_t(r.first)]++] = r.second;
  }
  // Values made during the pass (after the sweep) have none.
  std::span<Node* const> of(const Value* v) const {
    const size_t i = size_t(v->id());
    if (i + 1 >= first_.size()) return {};
    return {users_.data() + first_[i], users_.data() + first_[i + 1]};
  }

 private:
  std::vector<uint32_t> first_;
  std::vector<Node*> users_;
};

class Reinplacer {
 public:
  explicit Reinplacer(ir::Graph& g) : g_(g) {}

  bool run() {
    std::vector<Node*> nodes = g_.nodes();
    auto roots = ir::storage_roots(g_);
    bytes_.emplace(g_, roots);
    parent_.resize(g_.num_values());
    for (size_t v = 0; v < parent_.size(); ++v) parent_[v] = roots[v] ? roots[v]->id() : int(v);
    reads_.resize(g_.num_values());
    removed_.assign(nodes.size() + 1, false);

    // Rule 2: outputs and inputs the program does not write are read at the end.
    // Rule 9's classes: what communication ops use. symm_placement (after this
    // pass) puts exactly those in symmetric memory when it can; marking one it
    // cannot place only keeps a returned result out of place, which costs nothing
    // (a returned result gets a fresh buffer either way). Both in one sweep: on
    // a 100k-node graph each sweep misses to memory on every node.
    std::vector<bool> written_inputs(g_.num_values(), false);
    symmetric_.assign(parent_.size(), false);
    std::vector<std::pair<int, Node*>> reads;  // (value id, reader): users_, in program order
    reads.reserve(nodes.size() * 2);
    for (Node* n : nodes) {
      if (is_epilogue_copy(*n, g_)) {
        written_inputs[size_t(n->arg(0).value->id())] = true;
        epilogues_.push_back(n);
      }
      for (size_t k = 0; k < n->args().size(); ++k) {
        if (k == 0 && is_epilogue_copy(*n, g_)) continue;  // it writes, not reads
        n->arg(k).for_each_value([&](Value* v) {
          reads_[size_t(find(v))].add(pos(n));
          bytes_->add(find(v), pos(n), n, v);
          reads.emplace_back(v->id(), n);
        });
      }
      if (comm_kind(*n) == CommKind::none) continue;
      for (const Arg& a : n->args()) a.for_each_value([&](Value* v) { symmetric_[size_t(find(v))] = true; });
      for (Value* o : n->outputs())
        if (o->is_tensor()) symmetric_[size_t(find(o))] = true;
    }
    users_.emplace(g_.num_values(), reads);
    for (Value* v : g_.outputs()) read_at_end(v);
    for (Value* in : g_.inputs())
      if (in->is_tensor() && !written_inputs[size_t(in->id())]) read_at_end(in);

    bool changed = false;
    std::vector<Node*> order;
    for (Node* n : nodes) {
      substitute(n);
      if (removed(n)) continue;
      if (n->functional()) {
        changed |= in_place_functional(n, &order);
      } else if (Operator* twin = twin_of(n->op()); twin && n->arg(0).kind == Arg::Kind::Value &&
                                                          same_values(n->output(0), n->arg(0).value)) {
        if (try_twin(n, *twin)) changed = true;
      }
      order.push_back(n);
    }
    // Rule 6.
    std::vector<Node*> kept;
    for (Node* n : order) {
      if (is_epilogue_copy(*n, g_) && n->arg(1).kind == Arg::Kind::Value) {
        Value* dst = n->arg(0).value;
        Value* src = n->arg(1).value;
        if (find(dst) == find(src) && dst->type() == src->type()) {
          changed = true;
          continue;
        }
      }
      kept.push_back(n);
    }
    std::vector<Value*> outs;
    for (Value* v : g_.outputs()) outs.push_back(resolve(v));
    g_.set_outputs(outs);
    g_.set_order(kept);
    // A receive that now writes a clone hands out the clone's layout: what is
    // derived from it (its wait, views of it) takes that layout too.
    if (changed) g_.refresh_layouts();
    return changed;
  }

 private:
  // A node's place in the program (1-based: 0 is before everything), fixed for
  // the whole pass (the order is rebuilt only at its end).
  size_t pos(const Node* n) const { return g_.position(n) + 1; }

  void read_at_end(Value* v) {
    reads_[size_t(find(v))].add(kEnd);
    bytes_->add(find(v), kEnd, nullptr, v);
  }

  // --- storage classes (union-find over value ids) ---------------------------
  int find(const Value* v) {
    size_t i = size_t(v->id());
    grow(i);
    while (parent_[i] != int(i)) {
      parent_[i] = parent_[size_t(parent_[i])];
      i = size_t(parent_[i]);
    }
    return int(i);
  }
  void unite(const Value* a, const Value* b) {
    int x = find(a), y = find(b);
    if (x == y) return;
    parent_[size_t(x)] = y;
    reads_[size_t(y)].merge(reads_[size_t(x)]);
    bytes_->merge(y, x);
    if (symmetric_[size_t(x)]) symmetric_[size_t(y)] = true;
  }
  void grow(size_t i) {
    while (parent_.size() <= i) {
      parent_.push_back(int(parent_.size()));
      reads_.emplace_back();
      symmetric_.push_back(false);
    }
  }
  Value* resolve(Value* v) {
    while (size_t(v->id()) < subst_.size() && subst_[size_t(v->id())]) v = subst_[size_t(v->id())];
    return v;
  }
  void record_substitution(Value* from, Value* to) {
    if (subst_.size() <= size_t(from->id())) subst_.resize(size_t(from->id()) + 1, nullptr);
    subst_[size_t(from->id())] = to;
  }
  bool removed(const Node* n) const { return removed_[pos(n)]; }
  void substitute(Node* n) {
    g_.map_operands(n, [&](Value* v) { return resolve(v); });
  }

  // The as_strided_scatter that writes `result` back exactly where `target` looks
  // (rule 3), or nullptr. A receive's result is written back after its wait, so
  // the scatter may take the wait's result; several results of one node (a
  // batch receiving two halo rows) are written back one after the other, so its
  // base may be the scatter of an earlier result (in `earlier`).
  Node* absorbing_scatter(Value* result, Value* target, std::span<Node* const> earlier) {
    auto of = [&](Value* w) -> Node* {
      for (Node* u : users_->of(w)) {
        const auto& us = u->schema();  // aten::as_strided_scatter, without building its name
        if (us.ns != "aten" || us.name != "as_strided_scatter" || !us.overload.empty() || removed(u)) continue;
        if (u->arg(1).kind != Arg::Kind::Value || u->arg(1).value != w) continue;
        if (u->arg(0).kind != Arg::Kind::Value || !in_target_storage(u->arg(0).value, target, earlier)) continue;
        const auto& t = target->type();
        if (u->arg(2).constant.to_int_list() == t.sizes && u->arg(3).constant.to_int_list() == t.strides &&
            !u->arg(4).constant.is_none() && u->arg(4).constant.to_int() == t.offset)
          return u;
      }
      return nullptr;
    };
    if (Node* s = of(result)) return s;
    for (Node* u : users_->of(result))
      if (comm_kind(*u) == CommKind::wait && u->arg(0).value == result)
        if (Node* s = of(u->output(0))) return s;
    return nullptr;
  }
  bool in_target_storage(Value* base, Value* target, std::span<Node* const> earlier) {
    if (find(base) == find(target)) return true;
    for (Node* e : earlier)
      if (e && base == e->output(0)) return in_target_storage(e->arg(0).value, target, earlier);
    return false;
  }

  // May `result` (fresh, contiguous) take `target`'s place and layout (rules 3, 4)?
  // The answer must be the same on every rank, whose programs differ only in
  // rank-dependent constants such as a slice's start: so a storage offset alone
  // (which such a start changes) never decides it — relative views of the result
  // (slice, select, view, an in-flight handle) stay correct when it moves; only
  // as_strided, whose offset is absolute, does not.
  //
  // By bytes (rule 10, `by_bytes` and ReadFootprints::decides): what the class
  // still reads after n may be other bytes than those n replaces. The scatters in
  // `absorbed` disappear with n (its own and those of its other results).
  bool may_write_in_place(Node* n, Value* target, Value* result, Node* scatter, std::span<Node* const> absorbed,
                          bool by_bytes) {
    by_bytes = by_bytes && bytes_->decides(target);
    if (reads_[size_t(find(target))].newest_except(pos(n), scatter ? pos(scatter) : 0) > pos(n)) {
      auto skip = [&](const Node* r) {
        return r == n || removed(r) || std::find(absorbed.begin(), absorbed.end(), r) != absorbed.end();
      };
      if (!by_bytes || bytes_->read_after(find(target), pos(n), skip, target)) return false;
    }
    if (reads_own_target(n, target, by_bytes)) return false;
    if (clobbered_by_epilogue(target, result, scatter)) return false;
    const auto& r = result->type();
    const auto& t = target->type();
    const bool same_strides = r.sizes == t.sizes && r.strides == t.strides;
    for (Node* u : users_->of(result)) {
      if (u == scatter || !is_view_node(*u)) continue;
      if (!same_strides || u->schema().name == "as_strided") return false;
    }
    return true;
  }

  // Rule 8: a written graph input's epilogue copy_ writes the input's buffer at
  // the end. A result that takes that buffer and is read at the end (returned,
  // or a view of it is) would be overwritten by it — unless it is the very value
  // the epilogue copies (or the scatter that n's result is written back with
  // makes it), in which case the epilogue disappears (rule 6).
  bool clobbered_by_epilogue(const Value* target, Value* result, const Node* scatter) {
    if (!reads_[size_t(find(result))].read_at_end()) return false;
    for (const Node* e : epilogues_) {
      if (find(e->arg(0).value) != find(target) || e->arg(1).kind != Arg::Kind::Value) continue;
      Value* final_value = resolve(e->arg(1).value);
      if (find(final_value) == find(result)) continue;
      if (scatter && final_value == scatter->output(0)) continue;
      return true;
    }
    return false;
  }

  // Rule 7: n itself reads the target's buffer through another argument. An aten
  // op may (x.add_(x): each element is read before it is written, as eagerly) if
  // it reads the same elements; a collective or P2P op, or a second written
  // argument in the same buffer (cse may merge two equal buffers), may not.
  // By bytes, an argument in other bytes of the buffer is no clash (a batch
  // sending one half of a double buffer and receiving into the other).
  bool reads_own_target(const Node* n, const Value* target, bool by_bytes) {
    const int cls = find(target);
    int seen = 0;
    bool clash = false;
    for (const auto& a : n->args())
      a.for_each_value([&](Value* v) {
        if (!v->is_tensor() || find(v) != cls) return;
        if (v == target && seen++ == 0) return;  // the written argument itself, once
        if (by_bytes && !bytes_->share_bytes(v, target)) return;
        clash |= n->schema().ns != "aten" || v->type() != target->type();
      });
    return clash;
  }

  // The result now lives where the target is.
  void absorb(Value* target, Value* result, Node* scatter) {
    unite(result, target);
    bytes_->relocate(result, target);
    result->set_type(target->type());
    if (scatter) {
      Value* base = scatter->arg(0).value;
      bytes_->relocate(scatter->output(0), base);
      record_substitution(scatter->output(0), base);
      unite(scatter->output(0), base);
      removed_[pos(scatter)] = true;
    }
  }

  // Returns false when n stays functional (it then copies what it writes).
  bool in_place_functional(Node* n, std::vector<Node*>* order) {
    auto slots = n->output_slots();
    std::vector<Node*> scatters(slots.size(), nullptr);
    std::vector<bool> ok(slots.size(), true);
    for (size_t i = 0; i < slots.size(); ++i)
      if (slots[i]) scatters[i] = absorbing_scatter(n->output(i), n->value_at(*slots[i]), scatters);
    // A result's bytes may count on the scatters of n's other results going away:
    // only those of results that run in place do, so decide until nothing changes.
    for (bool again = true; again;) {
      again = false;
      std::vector<Node*> absorbed;
      for (size_t i = 0; i < slots.size(); ++i)
        if (slots[i] && ok[i] && scatters[i]) absorbed.push_back(scatters[i]);
      for (size_t i = 0; i < slots.size(); ++i)
        if (slots[i] && ok[i] && !may_write_in_place(n, n->value_at(*slots[i]), n->output(i), scatters[i], absorbed, true))
          ok[i] = false, again = true;
    }
    for (size_t i = 0; i < slots.size(); ++i) {
      if (!slots[i] || ok[i]) continue;
      // aten::clone makes a contiguous copy: a strided target keeps the functional
      // form, which copies in the target's layout (and is counted the same way).
      // (Dense strides, whatever the offset: offsets depend on the rank, and the
      // decision must not.)
      const auto& t = n->value_at(*slots[i])->type();
      if (t.strides != contiguous_strides(t.sizes)) return false;
    }
    for (size_t i = 0; i < slots.size(); ++i) {
      if (!slots[i]) continue;
      Value* target = n->value_at(*slots[i]);
      Value* result = n->output(i);
      if (ok[i]) {
        absorb(target, result, scatters[i]);
        continue;
      }
      // Rule 5: the old value is still read: write a copy of it.
      Operator& clone = Dispatcher::instance().get("aten::clone");
      Node* c = g_.make_node(clone, {Arg(target), Arg(IValue())}, false, n->loc());
      c->set_origin(ir::NodeOrigin::reinplace_copy,
                    fmt::format("copy: %{} is read after {} writes it", target->name(), n->op_name()));
      g_.name_after(c->output(0), target);
      order->push_back(c);
      g_.set_value_at(n, *slots[i], c->output(0));
      unite(result, c->output(0));
      bytes_->relocate(result, c->output(0));
      result->set_type(c->output(0)->type());
    }
    auto dropped = g_.make_in_place(n);
    // Results beyond the returns were the written tensors' new values: now the
    // tensors themselves hold them.
    for (size_t i = 0; i < dropped.size(); ++i) {
      size_t k = n->outputs().size() + i;
      record_substitution(dropped[i], n->value_at(*slots[k]));
    }
    return true;
  }

  bool try_twin(Node* n, Operator& twin) {
    Value* target = n->arg(0).value;
    if (repeats_elements(target)) return false;
    // Rule 9: a returned result is not written into symmetric memory. In place,
    // it would live in the arena and every run would copy it out to the caller;
    // functional, its kernel writes the caller's fresh output directly.
    // (A communication op's own in-place twin is the point of this pass: exempt.)
    if (comm_kind(*n) == CommKind::none && symmetric_[size_t(find(target))] && reads_[size_t(find(n->output(0)))].read_at_end())
      return false;
    // By storage only: running it in place saves a buffer, not a copy (rule 5).
    Node* scatter = absorbing_scatter(n->output(0), target, {});
    if (!may_write_in_place(n, target, n->output(0), scatter, {&scatter, 1}, false)) return false;
    g_.set_op(n, twin);
    absorb(target, n->output(0), scatter);
    return true;
  }

  ir::Graph& g_;
  std::vector<int> parent_;
  // Flat, by value or class id and node position rather than hash maps of
  // pointers: the pass visits them in program order, and on a 100k-node graph
  // each hashed or separately allocated entry is a cache miss.
  std::vector<LastReads> reads_;
  std::vector<bool> symmetric_;  // per class: planned in symmetric memory (symm_placement)
  std::optional<Users> users_;
  std::vector<Value*> subst_;  // by value id: the value that replaces it (nullptr: none)
  TwinCache twin_of{inplace_twin};
  std::vector<bool> removed_;  // by position: an absorbed scatter, gone from the program
  std::vector<const Node*> epilogues_;  // the written inputs' epilogue copy_ nodes
  std::optional<ReadFootprints> bytes_;  // rule 10
};

}  // namespace

bool Reinplace::run(ir::Graph& g) { return Reinplacer(g).run(); }

}  // namespace symmflow::passes
