#include "symmflow/ir/verifier.h"

#include <fmt/format.h>


#include "symmflow/library/bind.h"
#include "symmflow/library/dispatcher.h"

namespace symmflow::ir {

namespace {

std::string where(const Graph& g, const Node& n) {
  return fmt::format("{}:{}:{}: {}", g.file().empty() ? "<graph>" : g.file(), n.loc().line, n.loc().col,
                     n.op_name());
}

// Def-use lists (Value::uses): each value lists exactly the operands of nodes in
// program order that read it, and counts how often it is returned. Recomputed
// from the arguments, so a mutation that forgot to update a list fails here.
void verify_uses(const Graph& g, std::string_view after) {
  auto fail = [&](const std::string& why) {
    throw Error(fmt::format("verifier (after {}): @{}: def-use lists: {}", after, g.name(), why));
  };
  // Every node's operands, flattened in program order (node p's from first[p]
  // to first[p + 1]); nulled once listed. Flat, by position: no map or list per node.
  const auto& nodes = g.nodes();
  std::vector<size_t> first(nodes.size() + 1, 0);
  std::vector<const Value*> operands;
  for (size_t p = 0; p < nodes.size(); ++p) {
    first[p] = operands.size();
    for (const auto& a : nodes[p]->args()) a.for_each_value([&](Value* v) { operands.push_back(v); });
  }
  first[nodes.size()] = operands.size();
  for (size_t i = 0; i < g.num_values(); ++i) {
    const Value* v = g.value(i);
    for (const Use& u : v->uses()) {
      const size_t p = g.find_position(u.user);
      if (p == nodes.size())
        fail(fmt::format("%{} lists a use by {}, which is not in program order", v->name(), u.user->op_name()));
      const size_t count = first[p + 1] - first[p];
      const Value** at = u.operand < count ? &operands[first[p] + u.operand] : nullptr;
      if (!at || *at != v)
        fail(fmt::format("%{} lists operand {} of {}, which {}", v->name(), u.operand, where(g, *u.user),
                         at && !*at ? "it lists twice" : "reads another value"));
      *at = nullptr;
    }
  }
  for (size_t p = 0; p < nodes.size(); ++p)
    for (size_t k = first[p]; k < first[p + 1]; ++k)
      if (const Value* v = operands[k])
        fail(fmt::format("operand {} of {} reads %{}, which does not list that use", k - first[p],
                         where(g, *nodes[p]), v->name()));
  std::vector<int> returned(g.num_values(), 0);  // by id
  for (const Value* v : g.outputs())
    if (size_t(v->id()) < returned.size() && g.value(size_t(v->id())) == v) ++returned[size_t(v->id())];
  for (size_t i = 0; i < g.num_values(); ++i) {
    const Value* v = g.value(i);
    const int expected = returned[i];
    if (v->returned() != expected)
      fail(fmt::format("%{} is returned {} time{}, its count says {}", v->name(), expected, expected == 1 ? "" : "s",
                       v->returned()));
  }
}

}  // namespace

void verify(const Graph& g, std::string_view after) {
  auto fail_at = [&](const Node& n, const std::string& why) {
    throw Error(fmt::format("verifier (after {}): {}: {}", after, where(g, n), why));
  };
  // Defined values by id (a value of this graph sits at its id).
  std::vector<const Value*> defined_at(g.num_values(), nullptr);
  auto is_defined = [&](const Value* v) {
    return size_t(v->id()) < defined_at.size() && defined_at[size_t(v->id())] == v;
  };
  auto define = [&](const Value* v) {
    if (size_t(v->id()) >= defined_at.size()) defined_at.resize(size_t(v->id()) + 1, nullptr);
    defined_at[size_t(v->id())] = v;
  };
  for (const Value* in : g.inputs()) define(in);
  std::vector<IValue> env(g.num_values());
  // Reads left per value: a meta value is dropped after its last reader, so
  // that the working set stays the live values, not the whole graph's.
  // (Counted here, not taken from Value::uses, which verify_uses checks below.)
  std::vector<size_t> reads_left(g.num_values());
  for (const Node* n : g.nodes())
    for (const auto& a : n->args())
      a.for_each_value([&](Value* v) {
        if (size_t(v->id()) < reads_left.size()) ++reads_left[size_t(v->id())];
      });
  for (const Value* in : g.inputs())
    if (in->is_tensor()) env[size_t(in->id())] = IValue(in->type().meta());
    else env[size_t(in->id())] = in->kind() == ValueKind::Int ? IValue(int64_t(0))
                                 : in->kind() == ValueKind::Float ? IValue(0.0) : IValue(false);

  for (size_t p = 0; p < g.size(); ++p) {
    const Node* n = g.nodes()[p];
    // A node twice in the order is numbered by its last place.
    if (g.find_position(n) != p) fail_at(*n, "the node appears twice in program order");
    if (!n->op().is_defined()) fail_at(*n, "the op is not defined");
    const auto& schema = n->schema();
    if (n->args().size() != schema.arguments.size())
      fail_at(*n, fmt::format("{} arguments bound, the schema has {}", n->args().size(), schema.arguments.size()));
    for (const auto& a : n->args())
      a.for_each_value([&](Value* v) {
        if (!is_defined(v)) fail_at(*n, fmt::format("use of %{} before its definition", v->name()));
      });
    std::vector<IValue> args = g.materialize_args(*n, env);
    for (const auto& a : n->args())
      a.for_each_value([&](Value* v) {
        if (size_t(v->id()) >= reads_left.size()) return;
        size_t& left = reads_left[size_t(v->id())];
        if (left > 0 && --left == 0) env[size_t(v->id())] = IValue();
      });
    for (size_t i = 0; i < args.size(); ++i) {
      bool exact = false;
      if (!value_matches(schema.arguments[i].type, args[i], &exact))
        fail_at(*n, fmt::format("argument '{}' is {} but the schema says {}", schema.arguments[i].name,
                                args[i].kind_name(), schema.arguments[i].type.to_string()));
    }
    if (n->functional() && n->writes().empty()) fail_at(*n, "functional, but the op writes nothing");
    // Types: the Meta kernel again (a functional node's copies keep their types).
    OpContext ctx(DispatchKey::Meta);
    std::vector<Tensor> outs;
    try {
      outs = flatten_results(n->op().call(ctx, args));
    } catch (const Error& e) {
      fail_at(*n, e.what());
    }
    if (outs.size() > n->outputs().size())
      fail_at(*n, fmt::format("the op returns {} tensors, the node has {} results", outs.size(), n->outputs().size()));
    for (size_t i = 0; i < outs.size(); ++i) {
      const Value* o = n->output(i);
      const TensorType& t = o->type();
      if (t.dtype != outs[i].dtype() || t.sizes != outs[i].sizes())
        fail_at(*n, fmt::format("result %{} is recorded as {} but the op gives {}", o->name(), t.str(),
                                TensorType::of(outs[i]).str()));
      if (reads_left[size_t(o->id())] > 0) env[size_t(o->id())] = IValue(outs[i]);
    }
    for (size_t i = outs.size(); i < n->outputs().size(); ++i)
      if (reads_left[size_t(n->output(i)->id())] > 0)
        env[size_t(n->output(i)->id())] = IValue(n->output(i)->type().meta());
    for (const Value* o : n->outputs()) {
      if (o->producer() != n) fail_at(*n, fmt::format("result %{} names another producer", o->name()));
      if (is_defined(o)) fail_at(*n, fmt::format("%{} is defined twice", o->name()));
      define(o);
    }
  }
  const auto& types = g.output_types();
  if (types.size() != g.outputs().size())
    throw Error(fmt::format("verifier (after {}): @{} returns {} values, its signature {}", after, g.name(),
                            g.outputs().size(), types.size()));
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    const Value* v = g.outputs()[i];
    if (!is_defined(v))
      throw Error(fmt::format("verifier (after {}): return value {} (%{}) is not defined", after, i, v->name()));
    if (v->type().dtype != types[i].dtype || v->type().sizes != types[i].sizes)
      throw Error(fmt::format("verifier (after {}): return value {} (%{}) is {}, the signature says {}", after, i,
                              v->name(), v->type().str(), types[i].str()));
  }
  verify_uses(g, after);
}

}  // namespace symmflow::ir
