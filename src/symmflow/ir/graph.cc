// The implementation of graph.h, one unit although it passes 500 lines:
// TensorType, Arg, Node and Graph are declared together and lean on each
// other (a Graph creates Nodes and binds their Args, a Node's writes, aliases
// and effects come from its op's schema and feed Graph::make_in_place and
// replace_uses, result types come from Meta kernels through Graph's
// infer_outputs). Parser, printer and verifier, which only use the graph, are
// files of their own.
#include "symmflow/ir/graph.h"

#include "symmflow/core/overlap.h"

#include <fmt/format.h>

#include <algorithm>

#include "symmflow/core/checked.h"
#include "symmflow/core/error.h"
#include "symmflow/ir/exec_plan.h"
#include "symmflow/kernels/views.h"
#include "symmflow/library/dispatcher.h"

namespace symmflow::ir {

// --- types -------------------------------------------------------------------

TensorType TensorType::of(const Tensor& t) {
  return TensorType{t.dtype(), t.sizes(), t.strides(), t.storage_offset()};
}

bool TensorType::is_contiguous_at_zero() const {
  return offset == 0 && (strides.empty() || has_contiguous_strides(sizes, strides));
}

int64_t TensorType::numel() const { return numel_of(sizes); }

int64_t TensorType::nbytes() const { return nbytes_of(sizes, element_size(dtype)); }

int64_t TensorType::storage_bytes() const {
  // Every node's result asks (Graph::set_results): no copy of the strides, and
  // none built for a contiguous type, whose extent is offset + numel.
  auto what = [&] { return "the storage bytes of " + str(); };
  int64_t extent = 0;
  if (!strides.empty()) extent = storage_extent(sizes, strides, offset);
  else if (const int64_t n = numel(); n > 0) extent = checked_add(offset, n, what);
  return checked_mul(extent, int64_t(element_size(dtype)), what);
}

std::pair<int64_t, int64_t> TensorType::byte_extent() const {
  if (numel() == 0) return {0, 0};
  const int64_t itemsize = int64_t(element_size(dtype));
  if (!strides.empty()) return symmflow::byte_extent(ViewGeometry{sizes, strides, offset, itemsize});  // no copy
  const Shape st = contiguous_strides(sizes);
  return symmflow::byte_extent(ViewGeometry{sizes, st, offset, itemsize});
}

Tensor TensorType::meta() const {
  Tensor t = Tensor::meta(sizes.to_vector(), dtype, full_strides());
  return offset == 0 ? t : t.as_strided(t.sizes(), t.strides(), offset);
}

bool TensorType::operator==(const TensorType& o) const {
  if (dtype != o.dtype || sizes != o.sizes || offset != o.offset) return false;
  // Empty strides mean contiguous: built only when one side leaves them empty.
  if (strides.empty() == o.strides.empty()) return strides == o.strides;
  return full_strides() == o.full_strides();
}

Shape TensorType::full_strides() const { return strides.empty() ? contiguous_strides(sizes) : strides.to_vector(); }

std::string TensorType::str(bool with_layout) const {
  std::string s = fmt::format("{}[{}]", dtype_name(dtype), fmt::join(sizes, ", "));
  if (with_layout && !is_contiguous_at_zero())
    s += fmt::format(" strides [{}] offset {}", fmt::join(strides, ", "), offset);
  return s;
}

std::string Value::type_str() const {
  switch (kind_) {
    case ValueKind::Tensor: return type_.str();
    case ValueKind::Int: return "i64";
    case ValueKind::Float: return "f64";
    case ValueKind::Bool: return "bool";
  }
  return "?";
}

// --- args ----------------------------------------------------------------------

Arg Arg::of_expr(IntExpr::Ptr e, int64_t value) {
  Arg a;
  a.kind = Kind::Expr;
  a.expr = std::move(e);
  a.constant = IValue(value);
  return a;
}

Arg Arg::list(std::vector<Arg> elems) {
  Arg a;
  a.kind = Kind::List;
  a.elems = std::move(elems);
  return a;
}

bool Arg::has_values() const {
  bool any = false;
  for_each_value([&](Value*) { any = true; });
  return any;
}

namespace {

// A scalar graph input stands for a number whose value is known only at run time:
// type inference sees a placeholder of its kind.
IValue placeholder(const Value* v) {
  switch (v->kind()) {
    case ValueKind::Tensor: return IValue(v->type().meta());
    case ValueKind::Int: return IValue(int64_t(0));
    case ValueKind::Float: return IValue(0.0);
    case ValueKind::Bool: return IValue(false);
  }
  return {};
}

IValue meta_value(const Arg& a) {
  switch (a.kind) {
    case Arg::Kind::Const:
    case Arg::Kind::Expr: return a.constant;
    case Arg::Kind::Value: return placeholder(a.value);
    case Arg::Kind::List: {
      IValueList l;
      for (const auto& e : a.elems) l.push_back(meta_value(e));
      return IValue(std::move(l));
    }
  }
  return {};
}

std::vector<IValue> meta_args(const std::vector<Arg>& args) {
  std::vector<IValue> out;
  out.reserve(args.size());
  for (const auto& a : args) out.push_back(meta_value(a));
  return out;
}

// Every overload of the name takes no tensor and has a `dtype` argument.
bool is_factory(std::string_view name) {
  auto ops = Dispatcher::instance().overloads(name.substr(0, name.find('.')));
  if (ops.empty()) return false;
  for (Operator* op : ops) {
    const auto& s = op->schema();
    if (!s.find_argument("dtype")) return false;
    for (const auto& a : s.arguments)
      if (is_tensor_like(a.type)) return false;
  }
  return true;
}

bool is_list_type(const SchemaType& t) { return t.kind() == SchemaType::Kind::List; }

}  // namespace

// --- nodes ---------------------------------------------------------------------

static WriteSlots compute_writes(const Operator& op, const std::vector<Arg>& args) {
  std::vector<MutatedSlot> slots;
  if (op.has_mutation_resolver()) {
    slots = op.mutated_slots(meta_args(args));
  } else {
    for (size_t i : op.schema().mutated_arguments()) slots.push_back({i, -1});
  }
  WriteSlots out;
  for (const MutatedSlot& m : slots) {
    const Arg& a = args.at(m.arg);
    if (a.kind == Arg::Kind::List && m.elem < 0) {
      for (size_t e = 0; e < a.elems.size(); ++e) out.push_back({m.arg, int64_t(e)});
    } else if (a.kind == Arg::Kind::List || a.kind == Arg::Kind::Value) {
      out.push_back({m.arg, m.elem});
    }
    // A written optional left None writes nothing.
  }
  return out;
}

const WriteSlots& Node::writes() const {
  classify();
  return writes_;
}

Value* Node::value_at(const WriteSlot& s) const {
  const Arg& a = args_.at(s.arg);
  const Arg& e = s.elem < 0 ? a : a.elems.at(size_t(s.elem));
  SF_CHECK(e.kind == Arg::Kind::Value, "{}: argument {} is not a value", op_name(), s.arg);
  return e.value;
}

namespace {

// contiguous() and reshape() alias their input only when no copy is needed; the
// schema says `Tensor(a)` either way.
bool returns_view_when_possible_only(const Node& n) {
  const auto& s = n.schema();
  return s.ns == "aten" && (s.name == "contiguous" || s.name == "reshape");
}

bool maybe_alias_is_view(const Node& n) {
  Tensor in = n.arg(0).value->type().meta();
  if (n.schema().name == "contiguous") return in.is_contiguous();
  try {
    kernels::view(in, meta_value(n.arg(1)).to_int_list());
    return true;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace

// One entry per output: {written slot, plain alias slot}. Computed from the
// schema's alias annotations; functional nodes append their uncovered writes.
static void classify_outputs(const Node& n, const WriteSlots& writes, OutputSlots* slots, OutputSlots* aliases) {
  const auto& schema = n.schema();
  auto written = [&](WriteSlot s) { return std::find(writes.begin(), writes.end(), s) != writes.end(); };
  WriteSlots covered;
  size_t out = 0;
  const bool wait = schema.ns == "c10d" && schema.name == "wait_tensor";
  for (size_t r = 0; r < schema.returns.size() && out < n.outputs().size(); ++r) {
    auto j = schema.aliased_input_of_return(r);
    if (wait) j = 0;
    if (j && returns_view_when_possible_only(n) && !maybe_alias_is_view(n)) j.reset();
    const bool list = is_list_type(schema.returns[r].type);
    size_t count = 1;
    if (list) count = j && n.arg(*j).kind == Arg::Kind::List ? n.arg(*j).elems.size() : n.outputs().size() - out;
    for (size_t e = 0; e < count && out < n.outputs().size(); ++e, ++out) {
      std::optional<WriteSlot> s;
      // A list return aliases element e of a list argument, or, for a single
      // tensor split into views (`Tensor(a -> *) self -> Tensor(a)[]`), all of it.
      if (j) s = WriteSlot{*j, list && n.arg(*j).kind == Arg::Kind::List ? int64_t(e) : -1};
      if (s && written(*s)) {
        slots->push_back(s);
        aliases->push_back(std::nullopt);
        covered.push_back(*s);
      } else {
        slots->push_back(std::nullopt);
        aliases->push_back(s);
      }
    }
  }
  if (!n.functional()) return;
  for (const auto& w : writes)
    if (std::find(covered.begin(), covered.end(), w) == covered.end() && out < n.outputs().size()) {
      slots->push_back(w);
      aliases->push_back(std::nullopt);
      ++out;
    }
}

void Node::classify() const {
  if (classified_) return;
  writes_ = compute_writes(*op_, args_);
  slots_.clear();
  aliases_.clear();
  classify_outputs(*this, writes_, &slots_, &aliases_);
  classified_ = true;
}

const OutputSlots& Node::output_slots() const {
  classify();
  return slots_;
}

std::vector<Value*> Node::output_aliases() const {
  classify();
  std::vector<Value*> out;
  out.reserve(aliases_.size());
  for (size_t i = 0; i < aliases_.size(); ++i) out.push_back(output_alias(i));
  return out;
}

Value* Node::output_alias(size_t i) const {
  classify();
  return i < aliases_.size() && aliases_[i] ? value_at(*aliases_[i]) : nullptr;
}

bool Node::has_output_alias() const {
  classify();
  return std::any_of(aliases_.begin(), aliases_.end(), [](const auto& a) { return a.has_value(); });
}

Value* Node::output_storage_source(size_t i) const {
  classify();
  if (!functional_ && i < slots_.size() && slots_[i]) return value_at(*slots_[i]);
  return output_alias(i);
}

bool Node::has_effects() const {
  // symmflow:: holds the compiler's own compute ops (symmflow::fused_pointwise):
  // pure, like the aten ops they stand for.
  const auto& s = schema();
  return s.ns != "aten" && s.ns != "symmflow";
}

// --- graph ---------------------------------------------------------------------

namespace {

// N when `name` is `_N` as fresh naming writes it (decimal, no leading zero).
std::optional<size_t> generated_number(std::string_view name) {
  if (name.size() < 2 || name[0] != '_' || (name[1] == '0' && name.size() > 2) || name.size() > 20) return std::nullopt;
  size_t k = 0;
  for (char c : name.substr(1)) {
    if (c < '0' || c > '9') return std::nullopt;
    k = k * 10 + size_t(c - '0');
  }
  return k;
}

}  // namespace

Value* Graph::new_value(std::string name, TensorType type, ValueKind kind) {
  Value* v = value_pool_.make();
  v->id_ = int(values_.size());
  v->kind_ = kind;
  v->type_ = std::move(type);
  // Results nobody named get a fresh `%_N`, kept by N (generated_), not in the
  // name table: a traced program names almost none of its values, and at 100k
  // values the string table's lookups missed the cache on every new value
  // (docs/performance.md, compile time, round 9). A name the program gives
  // later wins over such a generated one, which moves aside.
  const bool generated = name.empty();
  if (generated) {
    name = fresh_name("_");
    hold_generated(v, name);
  } else {
    if (auto k = generated_number(name)) {
      ++explicit_generated_form_;
      if (*k < generated_.size() && generated_[*k]) {
        Value* other = generated_[*k];
        generated_[*k] = nullptr;
        other->name_ = fresh_name("_");  // not `name`, which v holds now
        hold_generated(other, other->name_);
      }
    }
    SF_CHECK(by_name_.try_emplace(name, v).second, "value %{} is already defined", name);
  }
  v->name_ = std::move(name);
  v->generated_name_ = generated;
  values_.push_back(v);
  return v;
}

void Graph::hold_generated(Value* v, std::string_view name) {
  const size_t k = *generated_number(name);
  if (generated_.size() <= k) generated_.resize(std::max(k + 1, generated_.size() * 2), nullptr);
  generated_[k] = v;
}

std::string Graph::fresh_name(std::string_view hint) {
  if (hint.empty() || hint == "_") {
    // Generated numbers only grow, so only a name the program gave in the same
    // form (`%_7` in a parsed program) can be taken.
    for (;;) {
      std::string n = "_" + std::to_string(next_fresh_++);
      if (explicit_generated_form_ == 0 || !by_name_.count(n)) return n;
    }
  }
  std::string h(hint);
  int& k = next_version_[h];
  for (;;) {
    std::string n = fmt::format("{}.{}", h, ++k);
    if (!by_name_.count(n)) return n;
  }
}

void Graph::name_after(Value* v, const Value* like) {
  if (!v->generated_name_) return;
  std::string base = like->name();
  if (auto dot = base.find('.'); dot != std::string::npos) base.resize(dot);
  if (!base.empty() && base[0] == '_') return;  // versions of unnamed values stay unnamed
  generated_[*generated_number(v->name_)] = nullptr;
  v->name_ = fresh_name(base);
  v->generated_name_ = false;
  by_name_[v->name_] = v;
}

Value* Graph::find_value(std::string_view name) const {
  if (auto it = by_name_.find(std::string(name)); it != by_name_.end()) return it->second;
  if (auto k = generated_number(name); k && *k < generated_.size()) return generated_[*k];
  return nullptr;
}

Value* Graph::add_input(std::string name, TensorType type) {
  if (type.strides.empty()) type.strides = contiguous_strides(type.sizes);
  // Guards check the layout; a parsed program's inputs are contiguous at 0.
  Value* v = new_value(std::move(name), std::move(type));
  v->storage_size_ = v->type_.storage_bytes();
  inputs_.push_back(v);
  return v;
}

Value* Graph::add_scalar_input(std::string name, ValueKind kind) {
  Value* v = new_value(std::move(name), TensorType{}, kind);
  inputs_.push_back(v);
  return v;
}

Node* Graph::append_call(std::string_view op_name, CallArgs call, SourceLoc loc, bool functional,
                         std::vector<std::string> out_names) {
  // Factories (ops without a tensor argument) take their dtype positionally too:
  // `aten::zeros([4], f32)` is `aten::zeros([4], dtype=f32)`.
  if (!call.positional.empty() && call.positional.back().kind == Arg::Kind::Const &&
      call.positional.back().constant.is_dtype() && is_factory(op_name)) {
    call.keywords.emplace_back("dtype", call.positional.back());
    call.positional.pop_back();
  }
  std::vector<IValue> positional;
  positional.reserve(call.positional.size());
  for (const auto& a : call.positional) positional.push_back(meta_value(a));
  Kwargs kwargs;
  for (const auto& [k, a] : call.keywords) {
    SF_CHECK(!kwargs.count(k), "{}: keyword argument '{}' is given twice", op_name, k);
    kwargs[k] = meta_value(a);
  }
  auto [op, bound] = Dispatcher::instance().resolve(op_name, positional, kwargs);
  const auto& schema = op->schema();

  // Keep the written form of each given argument (values, expressions); constants
  // take their bound (converted) value so that the stored graph is canonical.
  std::vector<const Arg*> given(schema.arguments.size(), nullptr);
  // Each given argument's meta value, computed above for resolve: type inference
  // takes it again instead of making new placeholders (meta_args).
  std::vector<const IValue*> given_meta(schema.arguments.size(), nullptr);
  for (size_t i = 0; i < call.positional.size() && i < given.size(); ++i) {
    given[i] = &call.positional[i];
    given_meta[i] = &positional[i];
  }
  for (const auto& [k, a] : call.keywords) {
    const size_t i = *schema.argument_index(k);
    given[i] = &a;
    given_meta[i] = &kwargs.at(k);
  }
  Node* n = make_node(*op, {}, functional, loc);
  n->args_.reserve(schema.arguments.size());
  n->given_.reserve(schema.arguments.size());
  std::vector<IValue> meta;  // meta_args(n->args_), from the values at hand
  meta.reserve(schema.arguments.size());
  for (size_t i = 0; i < schema.arguments.size(); ++i) {
    const Arg* g = given[i];
    if (g && (g->has_values() || (g->kind == Arg::Kind::Expr && bound[i].is_int()) ||
              (g->kind == Arg::Kind::List && bound[i].is_list() &&
               std::any_of(g->elems.begin(), g->elems.end(),
                           [](const Arg& e) { return e.kind == Arg::Kind::Expr; })))) {
      n->args_.push_back(*g);
      meta.push_back(*given_meta[i]);  // meta_value(*g)
    } else {
      n->args_.push_back(Arg(bound[i]));
      meta.push_back(bound[i]);
    }
    n->given_.push_back(g != nullptr);
  }
  if (functional)
    SF_CHECK(!n->writes().empty(), "functional {}: the op writes none of its arguments",
             op->full_name());
  infer_outputs(n, std::move(out_names), std::move(meta));
  append(n);
  return n;
}

Node* Graph::make_node(Operator& op, std::vector<Arg> bound, bool functional, SourceLoc loc) {
  Node* raw = node_pool_.make();
  raw->op_ = &op;
  raw->given_.assign(bound.size(), true);
  raw->args_ = std::move(bound);
  raw->functional_ = functional;
  raw->loc_ = loc;
  if (!raw->args_.empty()) infer_outputs(raw, {});
  return raw;
}

Node* Graph::make_node_typed(Operator& op, std::vector<Arg> bound, SourceLoc loc, std::vector<TensorType> results) {
  Node* n = make_node(op, {}, /*functional=*/false, loc);
  n->given_.assign(bound.size(), true);
  n->args_ = std::move(bound);
  n->num_returns_ = results.size();
  set_results(n, {}, std::move(results));
  return n;
}

std::vector<Tensor> flatten_results(const std::vector<IValue>& results) {
  std::vector<Tensor> out;
  for (const auto& r : results) {
    if (r.is_tensor()) out.push_back(r.to_tensor());
    else if (r.is_list())
      for (const auto& e : r.to_list()) out.push_back(e.to_tensor());
  }
  return out;
}

void Graph::infer_outputs(Node* n, std::vector<std::string> out_names, std::optional<std::vector<IValue>> meta) {
  auto args = meta ? std::move(*meta) : meta_args(n->args_);
  WriteSlots writes;
  // The functional form runs on copies of what the op writes, in their layout
  // (kernels::clone_layout): the same types.
  if (n->functional_) writes = n->writes();
  OpContext ctx(DispatchKey::Meta);
  std::vector<IValue> results;
  try {
    results = n->op_->call(ctx, args);
  } catch (const Error& e) {
    std::string msg = e.what();
    std::string name = n->op_->full_name();
    std::string qual = n->schema().qualified_name();
    if (msg.rfind(qual, 0) != 0) msg = name + ": " + msg;
    throw Error(msg);
  }
  std::vector<Tensor> outs = flatten_results(results);
  n->outputs_.clear();
  // Provisional outputs so that classify_outputs can count them.
  size_t n_returns = outs.size();
  n->num_returns_ = n_returns;
  std::vector<TensorType> types;
  types.reserve(outs.size());
  for (const auto& t : outs) types.push_back(TensorType::of(t));
  if (n->functional_) {
    n->outputs_.assign(n_returns, nullptr);
    n->invalidate();
    std::vector<WriteSlot> covered;
    for (const auto& s : n->output_slots()) if (s) covered.push_back(*s);
    n->outputs_.clear();
    for (const auto& w : writes)
      if (std::find(covered.begin(), covered.end(), w) == covered.end()) {
        const IValue& slot = w.elem < 0 ? args[w.arg] : args[w.arg].to_list()[size_t(w.elem)];
        types.push_back(TensorType::of(slot.to_tensor()));
      }
  }
  set_results(n, out_names, std::move(types));
}

void Graph::set_results(Node* n, const std::vector<std::string>& out_names, std::vector<TensorType> types) {
  if (!out_names.empty())
    SF_CHECK(out_names.size() == types.size(), "{} returns {} tensor{}, but {} name{} given",
             n->op_->full_name(), types.size(), types.size() == 1 ? "" : "s", out_names.size(),
             out_names.size() == 1 ? " is" : "s are");
  n->outputs_.clear();
  for (size_t i = 0; i < types.size(); ++i) {
    Value* v = new_value(out_names.empty() ? std::string() : out_names[i], std::move(types[i]));
    v->producer_ = n;
    v->output_index_ = int(i);
    n->outputs_.push_back(v);
  }
  n->invalidate();
  // A view must fit the storage it views (as PyTorch checks when it sets a
  // tensor's storage): as_strided can ask for more than there is.
  for (size_t i = 0; i < n->outputs_.size(); ++i) {
    Value* o = n->outputs_[i];
    Value* src = n->output_alias(i);
    if (!src && !n->functional_ && i < n->slots_.size() && n->slots_[i]) src = n->value_at(*n->slots_[i]);
    const int64_t need = o->type_.storage_bytes();
    o->storage_size_ = src ? src->storage_size_ : need;
    if (src && src->is_tensor() && need > o->storage_size_)
      throw Error(fmt::format("{}: setStorage: sizes [{}], strides [{}], storage offset {}, and itemsize {} requiring "
                              "a storage size of {} are out of bounds for storage of size {}",
                              n->op_->full_name(), fmt::join(o->type_.sizes, ", "), fmt::join(o->type_.strides, ", "),
                              o->type_.offset, element_size(o->type_.dtype), need, o->storage_size_));
  }
  n->layout_at_ = ++layout_epoch_;
  n->layout_stale_ = false;
}

std::vector<Value*> Graph::make_in_place(Node* n) {
  SF_CHECK(n->functional_, "make_in_place: {} is not functional", n->op_name());
  std::vector<Value*> dropped(n->outputs_.begin() + long(n->num_returns_), n->outputs_.end());
  n->outputs_.resize(n->num_returns_);
  n->functional_ = false;
  n->invalidate();
  n->layout_stale_ = true;
  share_storage_sizes(n);
  return dropped;
}

namespace {
// Value::set_type's stamp: newer than every derivation, until the producer's next one.
constexpr uint64_t kLayoutChangedByHand = ~uint64_t(0);
}  // namespace

void Value::set_type(TensorType t) {
  type_ = std::move(t);
  layout_changed_ = kLayoutChangedByHand;
  // A full refresh would derive it from the producer's kernel again: so does this one.
  if (producer_) producer_->layout_stale_ = true;
}

void Graph::note_operand_change(Node* n, const Value* from, const Value* to) {
  if (from->layout_changed_ > n->layout_at_ || !(from->type_ == to->type_) || from->storage_size_ != to->storage_size_)
    n->layout_stale_ = true;
}

void Graph::refresh_layouts() {
  for (Node* n : order_) {
    if (n->functional_) continue;  // its copies keep their recorded layouts
    bool stale = n->layout_stale_;
    for (size_t i = 0; i < n->args_.size() && !stale; ++i)
      n->args_[i].for_each_value([&](const Value* v) { stale |= v->layout_changed_ > n->layout_at_; });
    // Same op, same argument layouts as when its results were derived: the
    // kernel would give the same layouts again.
    if (!stale) continue;
    const uint64_t stamp = ++layout_epoch_;
    std::vector<int64_t> storage_before;
    storage_before.reserve(n->outputs_.size());
    for (const Value* o : n->outputs_) storage_before.push_back(o->storage_size_);
    OpContext ctx(DispatchKey::Meta);
    std::vector<Tensor> outs = flatten_results(n->op_->call(ctx, meta_args(n->args_)));
    std::vector<bool> changed(n->outputs_.size(), false);
    for (size_t i = 0; i < outs.size() && i < n->outputs_.size(); ++i) {
      TensorType t = TensorType::of(outs[i]);
      TensorType& cur = n->outputs_[i]->type_;
      if (t.dtype == cur.dtype && t.sizes == cur.sizes) {
        changed[i] = t.strides != cur.strides || t.offset != cur.offset;
        cur = std::move(t);
      }
    }
    share_storage_sizes(n);
    for (size_t i = 0; i < n->outputs_.size(); ++i) {
      Value* o = n->outputs_[i];
      if (changed[i] || o->storage_size_ != storage_before[i] || o->layout_changed_ == kLayoutChangedByHand)
        o->layout_changed_ = stamp;
    }
    n->layout_at_ = stamp;
    n->layout_stale_ = false;
  }
}

// An output that now aliases the argument it writes views that argument's
// storage: it takes its size (a fresh functional result had its own).
void Graph::share_storage_sizes(Node* n) {
  n->classify();
  for (size_t i = 0; i < n->outputs_.size(); ++i) {
    Value* src = n->output_alias(i);
    if (!src && i < n->slots_.size() && n->slots_[i]) src = n->value_at(*n->slots_[i]);
    Value* o = n->outputs_[i];
    if (src && src->is_tensor() && o->storage_size_ != src->storage_size_) {
      o->storage_size_ = src->storage_size_;
      o->layout_changed_ = std::max(o->layout_changed_, ++layout_epoch_);  // its readers derive again
    }
  }
}

void Graph::set_op(Node* n, Operator& op) {
  n->op_ = &op;
  n->invalidate();
  n->layout_stale_ = true;
  if (!n->functional_) share_storage_sizes(n);
}

// --- def-use lists ----------------------------------------------------------------

void Graph::add_use(Value* v, Node* n, uint32_t k) {
  n->use_pos_[k] = uint32_t(v->uses_.size());
  v->uses_.push_back(Use{n, k});
}

// Swap-and-pop: the use that moves into the hole learns its new index.
void Graph::drop_use(Value* v, Node* n, uint32_t k) {
  auto& uses = v->uses_;
  const uint32_t i = n->use_pos_[k];
  SF_CHECK(i < uses.size() && uses[i] == (Use{n, k}), "def-use lists: operand {} of {} is not a use of %{}", k,
           n->op_name(), v->name());
  if (i + 1 != uses.size()) {
    uses[i] = uses.back();
    uses[i].user->use_pos_[uses[i].operand] = i;
  }
  uses.pop_back();
}

void Graph::hook(Node* n) {
  SF_CHECK(!n->in_order_, "{} is in program order twice", n->op_name());
  n->in_order_ = true;
  n->use_pos_.clear();
  uint32_t k = 0;
  for (const auto& a : n->args_)
    a.for_each_value([&](Value* v) {
      n->use_pos_.push_back(0);
      add_use(v, n, k++);
    });
}

void Graph::unhook(Node* n) {
  uint32_t k = 0;
  for (const auto& a : n->args_) a.for_each_value([&](Value* v) { drop_use(v, n, k++); });
  n->in_order_ = false;
}

void Graph::set_arg(Node* n, size_t i, Arg a) {
  SF_CHECK(i < n->args_.size(), "{}: no argument {}", n->op_name(), i);
  n->layout_stale_ = true;
  if (!n->in_order_) {
    n->args_[i] = std::move(a);
    return;
  }
  // The operands before argument i keep their numbers; those from i on are
  // renumbered, so the node is unhooked and hooked again (O(its operands)).
  unhook(n);
  n->args_[i] = std::move(a);
  hook(n);
}

void Graph::set_value_at(Node* n, const WriteSlot& s, Value* v) {
  Arg& a = n->args_.at(s.arg);
  Arg& e = s.elem < 0 ? a : a.elems.at(size_t(s.elem));
  SF_CHECK(e.kind == Arg::Kind::Value, "{}: argument {} is not a value", n->op_name(), s.arg);
  if (e.value == v) return;
  note_operand_change(n, e.value, v);
  if (!n->in_order_) {
    e.value = v;
    return;
  }
  // The slot's operand number: the values of the arguments before it, and of
  // the list elements before it.
  uint32_t k = 0;
  for (size_t i = 0; i < s.arg; ++i) n->args_[i].for_each_value([&](Value*) { ++k; });
  if (s.elem >= 0)
    for (int64_t j = 0; j < s.elem; ++j) a.elems[size_t(j)].for_each_value([&](Value*) { ++k; });
  drop_use(e.value, n, k);
  e.value = v;
  add_use(v, n, k);
}

void Graph::set_outputs(std::vector<Value*> outs) {
  for (Value* v : outputs_) --v->returned_;
  outputs_ = std::move(outs);
  for (Value* v : outputs_) ++v->returned_;
}

size_t Graph::find_position(const Node* n) const {
  if (!positions_valid_) {
    for (size_t i = 0; i < order_.size(); ++i) order_[i]->pos_ = i;
    positions_valid_ = true;
  }
  return n->pos_ < order_.size() && order_[n->pos_] == n ? n->pos_ : order_.size();
}

size_t Graph::position(const Node* n) const {
  const size_t p = find_position(n);
  SF_CHECK(n->in_order_ && p < order_.size(), "position: {} is not in program order", n->op_name());
  return p;
}

void Graph::append(Node* n) {
  hook(n);
  n->pos_ = order_.size();
  order_.push_back(n);
}

void Graph::insert_before(Node* before, Node* n) {
  auto it = before ? std::find(order_.begin(), order_.end(), before) : order_.end();
  hook(n);
  order_.insert(it, n);
  positions_valid_ = false;
}

void Graph::set_order(std::vector<Node*> order) {
  const uint64_t mark = ++order_epoch_;
  for (Node* n : order) {
    SF_CHECK(n->mark_ != mark, "set_order @{}: {} appears twice", name_, n->op_name());
    n->mark_ = mark;
  }
  for (Node* n : order_)
    if (n->mark_ != mark) unhook(n);
  for (Node* n : order)
    if (!n->in_order_) hook(n);
  order_ = std::move(order);
  positions_valid_ = false;
}

void Graph::remove(Node* n) {
  auto it = std::find(order_.begin(), order_.end(), n);
  if (it == order_.end()) return;
  order_.erase(it);
  unhook(n);
  positions_valid_ = false;
}

size_t Graph::replace_uses(Value* from, Value* to, const std::function<bool(const Node*)>& where) {
  if (from == to) return 0;
  size_t replaced = 0;
  auto operand = [](Node* n, uint32_t k) -> Value*& {
    Value** found = nullptr;
    uint32_t i = 0;
    for (auto& a : n->args_)
      a.for_each_value_mut([&](Value*& v) {
        if (i++ == k) found = &v;
      });
    return *found;
  };
  for (size_t i = 0; i < from->uses_.size();) {
    const Use u = from->uses_[i];
    if (where && !where(u.user)) {
      ++i;
      continue;
    }
    drop_use(from, u.user, u.operand);  // the last use moves to i
    note_operand_change(u.user, from, to);
    operand(u.user, u.operand) = to;
    add_use(to, u.user, u.operand);
    ++replaced;
  }
  if (from->returned_ > 0)
    for (auto& o : outputs_)
      if (o == from) {
        o = to;
        --from->returned_;
        ++to->returned_;
        ++replaced;
      }
  return replaced;
}

IValue Graph::materialize(const Arg& a, std::span<const IValue> env) const {
  switch (a.kind) {
    case Arg::Kind::Const:
    case Arg::Kind::Expr: return a.constant;
    case Arg::Kind::Value: return env[size_t(a.value->id())];
    case Arg::Kind::List: {
      IValueList l;
      l.reserve(a.elems.size());
      for (const auto& e : a.elems) l.push_back(materialize(e, env));
      return IValue(std::move(l));
    }
  }
  return {};
}

std::vector<IValue> Graph::materialize_args(const Node& n, std::span<const IValue> env) const {
  std::vector<IValue> out;
  out.reserve(n.args_.size());
  for (const auto& a : n.args_) out.push_back(materialize(a, env));
  return out;
}

std::unique_ptr<Graph> Graph::clone() const {
  auto g = std::make_unique<Graph>(name_, rank_, world_);
  g->file_ = file_;
  g->rank_set_ = rank_set_;
  g->output_types_ = output_types_;
  g->next_fresh_ = next_fresh_;
  std::vector<Value*> map(values_.size(), nullptr);
  for (Value* in : inputs_)
    map[size_t(in->id())] = in->is_tensor() ? g->add_input(in->name(), in->type())
                                            : g->add_scalar_input(in->name(), in->kind());
  auto remap = [&](Arg a) {
    a.for_each_value_mut([&](Value*& v) { v = map[size_t(v->id())]; });
    return a;
  };
  for (const Node* n : order_) {
    Node* c = g->node_pool_.make();
    c->op_ = n->op_;
    c->given_ = n->given_;
    c->functional_ = n->functional_;
    c->num_returns_ = n->num_returns_;
    c->loc_ = n->loc_;
    c->origin_ = n->origin_;
    c->note_ = n->note_;
    c->algorithm_ = n->algorithm_;
    for (const auto& a : n->args_) c->args_.push_back(remap(a));
    for (Value* o : n->outputs_) {
      Value* v = g->new_value(o->name(), o->type(), o->kind());
      v->symmetric_ = o->symmetric_;
      v->storage_size_ = o->storage_size_;
      v->producer_ = c;
      v->output_index_ = o->output_index_;
      c->outputs_.push_back(v);
      map[size_t(o->id())] = v;
    }
    g->append(c);
  }
  std::vector<Value*> outs;
  for (Value* o : outputs_) outs.push_back(map[size_t(o->id())]);
  g->set_outputs(std::move(outs));
  return g;
}


Graph::Graph(std::string name, int rank, int world) : name_(std::move(name)), rank_(rank), world_(world) {}

Graph::~Graph() = default;

void Graph::set_exec_plan(std::unique_ptr<ExecPlan> p) { exec_plan_ = std::move(p); }

std::string_view algorithm_name(Algorithm a) {
  switch (a) {
    case Algorithm::none: return "";
    case Algorithm::direct: return "direct";
    case Algorithm::one_shot: return "one_shot";
    case Algorithm::two_shot: return "two_shot";
    case Algorithm::staged: return "staged";
  }
  return "?";
}

}  // namespace symmflow::ir
