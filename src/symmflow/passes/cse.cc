#include "symmflow/passes/cse.h"

#include <bit>
#include <functional>
#include <string_view>

#include "symmflow/ir/printer.h"
#include "symmflow/passes/dce.h"

namespace symmflow::passes {

namespace {

// A key that is equal exactly when two nodes compute the same thing: the overload
// and every argument (values by identity, constants as printed: their exact
// spelling round-trips doubles; rank/world expressions by their text).
// An expression is not keyed by its value: `rank*4` and `0` are equal on rank 0
// only, and every rank must make the same decisions (the same program shape).
void append_key(std::string& k, const ir::Arg& a) {
  switch (a.kind) {
    case ir::Arg::Kind::Value:  // by identity: its id, not its printed name
      k += '%';
      k += std::to_string(a.value->id());
      return;
    case ir::Arg::Kind::List:
      k += '[';
      for (const auto& e : a.elems) {
        append_key(k, e);
        k += ',';
      }
      k += ']';
      return;
    case ir::Arg::Kind::Const:
    case ir::Arg::Kind::Expr: k += ir::print_arg(a); return;
  }
}

// Into k (cleared; one buffer for every node, not a string per node).
void key_of(const ir::Node& n, std::string& k) {
  // The overload by identity (one Operator per full name): its address, not its
  // name built as a string per node.
  const Operator* op = &n.op();
  k.assign(reinterpret_cast<const char*>(&op), sizeof(op));
  for (const auto& a : n.args()) {
    k += '\x1f';
    append_key(k, a);
  }
}

// The nodes kept so far by key: two nodes match exactly when their keys are the
// same bytes. The keys sit in one buffer and the table holds indices (open
// addressing, at most half full): no allocation per node, where a hash map of
// strings made two, scattered over the heap.
class KeyTable {
 public:
  explicit KeyTable(size_t max_entries) : slots_(std::bit_ceil(2 * max_entries + 2), 0) {
    entries_.reserve(max_entries);
  }
  // The node kept under `key`; else n, which is kept under it from now on.
  ir::Node* find_or_add(std::string_view key, ir::Node* n) {
    const size_t hash = std::hash<std::string_view>{}(key);
    const size_t mask = slots_.size() - 1;
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
      if (slots_[i] == 0) {
        entries_.push_back({hash, keys_.size(), key.size(), n});
        keys_.append(key);
        slots_[i] = uint32_t(entries_.size());
        return n;
      }
      const Entry& e = entries_[slots_[i] - 1];
      if (e.hash == hash && std::string_view(keys_).substr(e.offset, e.size) == key) return e.node;
    }
  }

 private:
  struct Entry {
    size_t hash, offset, size;
    ir::Node* node;
  };
  std::string keys_;
  std::vector<Entry> entries_;
  std::vector<uint32_t> slots_;  // an entries_ index + 1; 0: empty
};

// A factory (aten::zeros([n]), no value among its arguments) makes a fresh
// buffer, usually to be written: two merged would be one buffer, and reinplace
// would copy one apart again (a double buffer made of two zeros became one
// buffer plus a clone per receive).
bool is_factory(const ir::Node& n) {
  for (const auto& a : n.args())
    if (a.has_values()) return false;
  return !n.outputs().empty() && n.output(0)->is_tensor();
}

}  // namespace

bool CommonSubexpressionElimination::run(ir::Graph& g) {
  KeyTable seen(g.size());
  std::string key;
  std::vector<ir::Value*> subst(g.num_values(), nullptr);  // by id: a merged result -> the kept one's
  auto resolve = [&](ir::Value* v) { return subst[size_t(v->id())] ? subst[size_t(v->id())] : v; };
  std::vector<ir::Node*> kept;
  kept.reserve(g.size());
  bool changed = false;
  for (ir::Node* n : g.nodes()) {
    if (changed) g.map_operands(n, resolve);
    if (is_effect(*n) || n->functional() || is_factory(*n)) {
      kept.push_back(n);
      continue;
    }
    key_of(*n, key);
    ir::Node* same = seen.find_or_add(key, n);
    if (same == n) {
      kept.push_back(n);
      continue;
    }
    for (size_t i = 0; i < n->outputs().size(); ++i) subst[size_t(n->output(i)->id())] = same->output(i);
    changed = true;
  }
  if (!changed) return false;
  std::vector<ir::Value*> outs;
  for (ir::Value* v : g.outputs()) outs.push_back(resolve(v));
  g.set_outputs(outs);
  g.set_order(std::move(kept));
  return true;
}

}  // namespace symmflow::passes
