#include "symmflow/frontend/tracer.h"

#include <fmt/format.h>

#include <algorithm>

#include "symmflow/library/dispatcher.h"

namespace symmflow::frontend {

namespace {
thread_local Tracer* t_active = nullptr;
}  // namespace

Tracer::Tracer(std::string name, int rank, int world)
    : g_(std::make_unique<ir::Graph>(std::move(name), rank, world)), previous_(t_active) {
  g_->set_file("<traced>");
  t_active = this;
}

Tracer::~Tracer() {
  if (!finished_) t_active = previous_;
}

Tracer* Tracer::active() { return t_active; }

Tensor Tracer::input(const Tensor& example) {
  // The example's exact layout (strides, storage offset): view geometries are
  // then those of the real storage, and the program's guards check it.
  ir::TensorType type = ir::TensorType::of(example);
  ir::Value* v = g_->add_input(fmt::format("in{}", g_->inputs().size()), type);
  Tensor t = type.meta();
  values_[t.unsafe_impl()] = v;
  set_tensor_of(v, t);
  return t;
}

void Tracer::set_tensor_of(const ir::Value* v, Tensor t) {
  const size_t id = size_t(v->id());
  if (id >= tensor_of_.size()) tensor_of_.resize(std::max(id + 1, 2 * tensor_of_.size()));
  tensor_of_[id] = std::move(t);
}

bool Tracer::is_traced(const Tensor& t) const { return t.defined() && values_.count(t.unsafe_impl()); }

ir::Value* Tracer::value_of(const Tensor& t, std::string_view op) const {
  auto it = values_.find(t.unsafe_impl());
  SF_CHECK(it != values_.end(),
           "{}: a tensor that is not an input of the traced function ({}) is used inside it; pass it "
           "as an argument of the compiled function", op, t.defined() ? t.type_string() : "undefined");
  return it->second;
}

ir::Arg Tracer::to_arg(const IValue& v, std::string_view op) const {
  if (v.is_tensor()) return ir::Arg(value_of(v.to_tensor(), op));
  if (v.is_list()) {
    std::vector<ir::Arg> elems;
    for (const auto& e : v.to_list()) elems.push_back(to_arg(e, op));
    return ir::Arg::list(std::move(elems));
  }
  return ir::Arg(v);
}

std::vector<IValue> Tracer::record(std::string_view op, std::span<const IValue> positional, const Kwargs& kwargs) {
  SF_CHECK(!finished_, "{}: recorded after the trace finished", op);
  ir::CallArgs call;
  call.positional.reserve(positional.size());
  for (const auto& v : positional) call.positional.push_back(to_arg(v, op));
  for (const auto& [k, v] : kwargs) call.keywords.emplace_back(k, to_arg(v, op));
  ir::Node* n = g_->append_call(op, std::move(call));

  // Each result: the written input itself, or a new tracer tensor of its type.
  auto slots = n->output_slots();
  std::vector<Tensor> outs;
  outs.reserve(n->outputs().size());
  for (size_t i = 0; i < n->outputs().size(); ++i) {
    Tensor t;
    if (slots[i]) {
      const ir::Arg& a = n->arg(slots[i]->arg);
      t = tensor_of_.at(size_t((slots[i]->elem < 0 ? a : a.elems[size_t(slots[i]->elem)]).value->id()));
    } else {
      t = n->output(i)->type().meta();
      values_[t.unsafe_impl()] = n->output(i);
    }
    set_tensor_of(n->output(i), t);
    outs.push_back(std::move(t));
  }
  // Shaped like the schema's returns.
  const auto& returns = n->schema().returns;
  std::vector<IValue> result;
  result.reserve(returns.size());
  if (returns.size() == 1 && returns[0].type.kind() == SchemaType::Kind::List) {
    IValueList l(outs.begin(), outs.end());
    result.emplace_back(std::move(l));
  } else {
    for (size_t i = 0; i < returns.size() && i < outs.size(); ++i) result.emplace_back(outs[i]);
  }
  return result;
}

void Tracer::set_outputs(const std::vector<Tensor>& outs) {
  std::vector<ir::Value*> vs;
  std::vector<ir::TensorType> types;
  for (const auto& t : outs) {
    vs.push_back(value_of(t, "return"));
    types.push_back(vs.back()->type());
  }
  g_->set_outputs(vs);
  g_->set_output_types(types);
}

std::unique_ptr<ir::Graph> Tracer::finish() {
  SF_CHECK(!finished_, "Tracer::finish called twice");
  finished_ = true;
  t_active = previous_;
  return std::move(g_);
}

std::vector<IValue> call(std::string_view op, std::span<const IValue> positional, const Kwargs& kwargs) {
  if (Tracer* t = Tracer::active()) return t->record(op, positional, kwargs);
  OpContext ctx(DispatchKey::CPU);
  return Dispatcher::instance().call(op, ctx, positional, kwargs);
}

std::vector<IValue> call(std::string_view op, std::initializer_list<IValue> positional, const Kwargs& kwargs) {
  return call(op, std::span<const IValue>(positional.begin(), positional.size()), kwargs);
}

Tensor call_tensor(std::string_view op, std::initializer_list<IValue> positional, const Kwargs& kwargs) {
  auto r = call(op, positional, kwargs);
  SF_CHECK(!r.empty() && r[0].is_tensor(), "{} returns no tensor", op);
  return r[0].to_tensor();
}

}  // namespace symmflow::frontend
