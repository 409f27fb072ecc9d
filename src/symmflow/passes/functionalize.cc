#include "symmflow/passes/functionalize.h"

#include <deque>
#include <unordered_map>

#include "symmflow/ir/alias.h"
#include "symmflow/library/dispatcher.h"
#include "symmflow/passes/comm_ops.h"

namespace symmflow::passes {

using ir::Arg;
using ir::Node;
using ir::Value;
using ir::WriteSlot;

namespace {

Operator* twin_named(const Operator& op, bool to_inplace) {
  const auto& s = op.schema();
  if (to_inplace == (!s.name.empty() && s.name.back() == '_')) return nullptr;
  std::string name = to_inplace ? s.name + "_" : s.name.substr(0, s.name.size() - 1);
  std::string full = s.ns + "::" + name + (s.overload.empty() ? "" : "." + s.overload);
  Operator* t = Dispatcher::instance().find(full);
  if (!t) return nullptr;
  // Same arguments (names and types), the in-place one writing argument 0 and
  // returning it: then `x = op(a...)` and `op_(a...)` compute the same values.
  const auto& fs = to_inplace ? s : t->schema();
  const auto& is = to_inplace ? t->schema() : s;
  if (fs.arguments.size() != is.arguments.size() || fs.returns.size() != 1 || is.returns.size() != 1)
    return nullptr;
  for (size_t i = 0; i < fs.arguments.size(); ++i)
    if (fs.arguments[i].name != is.arguments[i].name || !(fs.arguments[i].type == is.arguments[i].type))
      return nullptr;
  if (is.mutated_arguments() != std::vector<size_t>{0} || is.aliased_input_of_return(0) != 0u) return nullptr;
  if (fs.is_mutable()) return nullptr;
  return t;
}

bool is_p2p(const Node& n) { return comm_kind(n) == CommKind::p2p; }

bool is_wait(const Node& n) { return comm_kind(n) == CommKind::wait; }

bool is_as_strided(const Node& n) { return n.schema().ns == "aten" && n.schema().name == "as_strided"; }

// How to rebuild a value from its storage's newest version: replay `view` on the
// rebuilt `parent` and take its result `output` (split and chunk return several
// views); no view means the value is the storage itself.
struct Recipe {
  const Node* view = nullptr;
  Value* parent = nullptr;
  size_t output = 0;
};

class Functionalizer {
 public:
  explicit Functionalizer(ir::Graph& g) : g_(g), roots_(ir::storage_roots(g)) {}

  bool run() {
    std::vector<Node*> nodes = g_.nodes();
    bool changed = false;
    for (Node* n : nodes) {
      if (is_wait(*n)) {
        wait(n);
      } else if (!n->functional() && !n->writes().empty()) {
        write(n);
        changed = true;
      } else {
        read(n);
      }
    }
    std::vector<Value*> outs;
    for (Value* v : g_.outputs()) outs.push_back(get(v));
    g_.set_outputs(outs);
    for (Value* in : g_.inputs()) {
      if (!in->is_tensor() || cur(in) == in) continue;
      // The epilogue: the caller sees the input's final contents.
      Operator& copy = Dispatcher::instance().get("aten::copy_");
      Node* epilogue = g_.make_node(copy, {Arg(in), Arg(cur(in)), Arg(IValue(false))}, false);
      epilogue->set_origin(ir::NodeOrigin::epilogue, "epilogue: the caller sees the input's final contents");
      emit(epilogue);
      changed = true;
    }
    g_.set_order(out_);
    return changed;
  }

 private:
  // --- bookkeeping, by the original graph's value ids --------------------------
  // Deques: growing them keeps references to their elements valid (get() recurses
  // while holding one).
  template <class T>
  static T& at(std::deque<T>& v, const Value* k) {
    if (size_t(k->id()) >= v.size()) v.resize(size_t(k->id()) + 1);
    return v[size_t(k->id())];
  }
  Value* root(const Value* v) { return roots_.at(size_t(v->id())); }
  Value* cur(Value* root) {
    auto it = cur_.find(root);
    return it == cur_.end() ? root : it->second;
  }
  void emit(Node* n) { out_.push_back(n); }

  // The value that holds v's current contents, rebuilding views of a storage that
  // was written since v was made.
  Value* get(Value* v) {
    if (!v->is_tensor() || size_t(v->id()) >= roots_.size() || !root(v)) return v;
    Value* latest = cur(root(v));
    const Recipe& r = at(recipe_, v);
    if (!r.view) return latest;
    if (at(map_, v) && at(made_at_, v) == latest) return at(map_, v);
    std::vector<Arg> args = r.view->args();
    if (is_as_strided(*r.view)) read_storage(args, r.parent);
    else args[0] = Arg(get(r.parent));
    Node* nv = g_.make_node(r.view->op(), std::move(args), false, r.view->loc());
    emit(nv);
    Value* rebuilt = nv->output(r.output);
    g_.name_after(rebuilt, v);
    at(map_, v) = rebuilt;
    at(made_at_, v) = latest;
    return rebuilt;
  }

  // as_strided's arguments made to read `input`'s storage at its newest version;
  // an omitted storage_offset meant the input's own, which is kept explicit.
  void read_storage(std::vector<Arg>& args, Value* input) {
    args[0] = Arg(cur(root(input)));
    if (args[3].kind == Arg::Kind::Const && args[3].constant.is_none()) args[3] = Arg(IValue(input->type().offset));
  }

  void substitute_args(Node* n) {
    g_.map_operands(n, [&](Value* v) { return get(v); });
  }

  // Writes `value` into the newest version of a's storage where a looks.
  void write_back(Value* a, Value* value) {
    Value* r = root(a);
    if (!at(recipe_, a).view) {
      cur_[r] = value;
      return;
    }
    const ir::TensorType& t = a->type();
    Operator& scatter = Dispatcher::instance().get("aten::as_strided_scatter");
    Node* s = g_.make_node(scatter,
                           {Arg(cur(r)), Arg(value), Arg(IValue(t.sizes.to_vector())), Arg(IValue(t.strides.to_vector())),
                            Arg(IValue(t.offset))},
                           false, value->producer() ? value->producer()->loc() : ir::SourceLoc{});
    emit(s);
    g_.name_after(s->output(0), r);
    cur_[r] = s->output(0);
    at(map_, a) = value;
    at(made_at_, a) = cur_[r];
  }

  // --- the three kinds of node ------------------------------------------------
  void read(Node* n) {
    if (!n->args().empty() && n->arg(0).kind == Arg::Kind::Value) original_input_[n] = n->arg(0).value;
    // What each result aliases, by the original graph's values (before substitution).
    const auto original_src = ir::output_storage_sources(*n);
    substitute_args(n);
    // as_strided addresses the storage, not its input's elements: it reads the
    // storage's newest version (every version has the storage's layout), not a
    // copy that holds only the input view's elements.
    if (is_as_strided(*n) && n->arg(0).kind == Arg::Kind::Value && root(original_input_[n])) {
      std::vector<Arg> args = n->args();
      read_storage(args, original_input_[n]);
      g_.set_arg(n, 0, std::move(args[0]));
      g_.set_arg(n, 3, std::move(args[3]));
      n->mark_given(3);
    }
    emit(n);
    auto src = ir::output_storage_sources(*n);
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      Value* o = n->output(i);
      if (src[i] && root(o) != o) {
        // An op with effects (c10d::isend) is never replayed as a view: that would
        // issue it again. Its result is another name for the tensor it aliases, so
        // it is rebuilt the way that tensor is.
        if (n->has_effects() && original_src[i] && size_t(original_src[i]->id()) < roots_.size())
          at(recipe_, o) = at(recipe_, original_src[i]);
        else
          at(recipe_, o) = Recipe{n, original_arg0(n), i};
        at(map_, o) = o;
        at(made_at_, o) = cur(root(o));
      }
    }
  }

  // A view's recipe names its original input (args are substituted in place, so
  // remember the original before that happens).
  Value* original_arg0(const Node* n) {
    auto it = original_input_.find(n);
    return it == original_input_.end() ? n->arg(0).value : it->second;
  }

  void write(Node* n) {
    auto writes = n->writes();
    std::vector<Value*> written;
    for (const auto& w : writes) written.push_back(n->value_at(w));
    std::vector<Arg> args = n->args();
    for (auto& a : args) a.for_each_value_mut([&](Value*& v) { v = get(v); });

    Node* nn = nullptr;
    Operator* twin = twin_of(n->op());
    if (twin && writes.size() == 1 && writes[0] == WriteSlot{0, -1} && !is_p2p(*n)) {
      Node* t = g_.make_node(*twin, args, false, n->loc());
      // The twin is exact only when its result has self's dtype and sizes (no
      // promotion, no broadcasting of self). A new version of a whole storage must
      // also keep its layout, since views of it are replayed on it.
      const auto& rt = t->output(0)->type();
      const auto& wt = written[0]->type();
      if (rt.dtype == wt.dtype && rt.sizes == wt.sizes && (at(recipe_, written[0]).view || rt == wt)) nn = t;
    }
    if (!nn) nn = g_.make_node(n->op(), args, true, n->loc());
    emit(nn);

    // The new value of each written tensor.
    std::vector<Value*> fresh(writes.size(), nullptr);
    if (!nn->functional()) {
      fresh[0] = nn->output(0);
    } else {
      auto slots = nn->output_slots();
      for (size_t i = 0; i < slots.size(); ++i)
        for (size_t k = 0; k < writes.size(); ++k)
          if (slots[i] && *slots[i] == writes[k]) fresh[k] = nn->output(i);
    }
    for (size_t k = 0; k < writes.size(); ++k) g_.name_after(fresh[k], written[k]);

    for (size_t k = 0; k < writes.size(); ++k) {
      Value* a = written[k];
      if (is_p2p(*n) && at(recipe_, a).view) {
        pending_[fresh[k]] = a;  // written back at its wait
        at(map_, a) = fresh[k];
        at(made_at_, a) = nullptr;
      } else {
        write_back(a, fresh[k]);
      }
    }

    // The original results: new values, plain aliases (sent tensors), fresh results.
    auto oslots = n->output_slots();
    auto oalias = n->output_aliases();
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      Value* o = n->output(i);
      if (oslots[i]) {
        size_t k = size_t(std::find(writes.begin(), writes.end(), *oslots[i]) - writes.begin());
        Value* a = written[k];
        at(recipe_, o) = at(recipe_, a);
        at(map_, o) = fresh[k];
        at(made_at_, o) = pending_.count(fresh[k]) ? nullptr : cur(root(a));
      } else if (oalias[i]) {
        at(recipe_, o) = at(recipe_, oalias[i]);
        at(map_, o) = nn->output(i);
        at(made_at_, o) = cur(root(oalias[i]));
      } else {
        at(map_, o) = nn->output(i);
        cur_[o] = nn->output(i);
      }
    }
  }

  void wait(Node* n) {
    Value* x = n->arg(0).value;
    Value* raw = at(map_, x) ? at(map_, x) : get(x);
    g_.set_arg(n, 0, Arg(raw));
    emit(n);
    Value* w = n->output(0);
    Value* r = root(x);
    at(recipe_, w) = at(recipe_, x);
    if (auto it = pending_.find(raw); it != pending_.end()) {
      Value* a = it->second;
      pending_.erase(it);
      g_.name_after(w, a);
      write_back(a, w);
      at(map_, w) = w;
      at(made_at_, w) = cur(r);
    } else if (!at(recipe_, x).view && cur(r) == raw) {
      // The storage's newest version is ready (received) or free again (sent) only
      // after the wait: later readers and writers use the wait's result.
      g_.name_after(w, raw);
      cur_[r] = w;
    } else {
      at(map_, w) = w;
      at(made_at_, w) = cur(r);
    }
  }

  ir::Graph& g_;
  std::vector<Value*> roots_;
  std::vector<Node*> out_;
  std::unordered_map<Value*, Value*> cur_;      // storage root -> newest version
  std::deque<Recipe> recipe_;
  std::deque<Value*> map_;                      // value -> its current materialization
  std::deque<Value*> made_at_;                  // ... and the version it was made from
  std::unordered_map<Value*, Value*> pending_;  // in-flight receive -> the view it lands in
  std::unordered_map<const Node*, Value*> original_input_;
  TwinCache twin_of{functional_twin};
};

}  // namespace

Operator* functional_twin(const Operator& op) { return twin_named(op, false); }
Operator* inplace_twin(const Operator& op) { return twin_named(op, true); }

bool Functionalize::run(ir::Graph& g) { return Functionalizer(g).run(); }

}  // namespace symmflow::passes
