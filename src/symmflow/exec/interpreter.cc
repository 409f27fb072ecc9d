#include "symmflow/exec/interpreter.h"

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "symmflow/core/op_site.h"
#include "symmflow/ir/alias.h"
#include "symmflow/kernels/copy.h"
#include "symmflow/runtime/world.h"

namespace symmflow::exec {

namespace {
void run_node_here(const ir::Graph& g, const ir::Node& n, std::vector<IValue>& env, Allocator* alloc,
                   OpContext* ctx_in);
}  // namespace

// The one dispatch site of the interpreter and the compiled program: the op
// and its .sf location are in scope while it runs (the runtime names them when
// a wait deadlocks), and an error leaving it says which op and where
// ("aten::div at prog.sf:3:8: ..."; the launcher adds "rank 1: ").
OpSite site_of(const ir::Graph& g, const ir::Node& n) {
  return {n.op().full_name(), g.file(), n.loc().line, n.loc().col};
}

void run_node(const ir::Graph& g, const ir::Node& n, std::vector<IValue>& env, Allocator* alloc, OpContext* ctx_in) {
  const OpSite site = site_of(g, n);
  OpSiteScope scope(site);
  try {
    run_node_here(g, n, env, alloc, ctx_in);
  } catch (...) {
    if (scope.nested()) throw;
    rethrow_at(site);
  }
}

namespace {
void run_node_here(const ir::Graph& g, const ir::Node& n, std::vector<IValue>& env, Allocator* alloc,
                   OpContext* ctx_in) {
  std::vector<IValue> args = g.materialize_args(n, env);
  std::optional<AllocatorGuard> guard;
  if (alloc) guard.emplace(*alloc);
  if (n.functional()) {
    // The functional form leaves its inputs alone: it writes fresh copies — in
    // symmetric memory where the op needs its argument there.
    auto symm = n.op().symm_mem_args();
    for (const auto& w : n.writes()) {
      IValue& slot = w.elem < 0 ? args[w.arg] : args[w.arg].to_list()[size_t(w.elem)];
      const std::string& name = n.schema().arguments[w.arg].name;
      std::optional<AllocatorGuard> symm_guard;
      if (std::find(symm.begin(), symm.end(), name) != symm.end())
        symm_guard.emplace(dist::world().heap().allocator());
      slot = IValue(kernels::clone_layout(slot.to_tensor()));
    }
  }
  OpContext local(DispatchKey::CPU);
  OpContext& ctx = ctx_in ? *ctx_in : local;
  std::vector<IValue> results = n.op().call(ctx, args);
  std::vector<Tensor> outs = ir::flatten_results(results);
  if (n.functional()) {
    // Written tensors that no return carries come after the returns.
    auto slots = n.output_slots();
    for (size_t i = outs.size(); i < n.outputs().size(); ++i) {
      const IValue& a = args[slots[i]->arg];
      outs.push_back(slots[i]->elem < 0 ? a.to_tensor() : a.to_list()[size_t(slots[i]->elem)].to_tensor());
    }
  }
  SF_CHECK(outs.size() == n.outputs().size(), "{}: the kernel returned {} tensors, the graph expects {}",
           n.op_name(), outs.size(), n.outputs().size());
  for (size_t i = 0; i < outs.size(); ++i) env[size_t(n.output(i)->id())] = IValue(outs[i]);
}
}  // namespace

SymmetricNeeds symmetric_needs(const ir::Graph& g) {
  auto roots = ir::storage_roots(g);
  std::vector<bool> marked(g.num_values(), false);
  for (const ir::Node* n : g.nodes()) {
    const auto& schema = n->schema();
    for (const auto& name : n->op().symm_mem_args()) {
      auto i = schema.argument_index(name);
      if (!i) continue;
      n->arg(*i).for_each_value([&](ir::Value* v) {
        if (ir::Value* r = roots[size_t(v->id())]) marked[size_t(r->id())] = true;
      });
    }
  }
  SymmetricNeeds needs;
  for (const ir::Value* in : g.inputs()) needs.input.push_back(marked[size_t(in->id())]);
  for (const ir::Node* n : g.nodes()) {
    bool any = false;
    for (const ir::Value* o : n->outputs()) any |= marked[size_t(o->id())] && roots[size_t(o->id())] == o;
    needs.node.push_back(any);
  }
  return needs;
}

std::vector<Tensor> run_eager(const ir::Graph& g, std::span<const IValue> inputs) {
  SF_CHECK(inputs.size() == g.inputs().size(), "graph @{} takes {} inputs, got {}", g.name(),
           g.inputs().size(), inputs.size());
  std::vector<IValue> env(g.num_values());
  for (size_t i = 0; i < inputs.size(); ++i) env[size_t(g.inputs()[i]->id())] = inputs[i];
  auto needs = symmetric_needs(g);
  for (size_t i = 0; i < g.nodes().size(); ++i)
    run_node(g, *g.nodes()[i], env, needs.node[i] ? &dist::world().heap().allocator() : nullptr);
  std::vector<Tensor> outs;
  for (const ir::Value* v : g.outputs()) outs.push_back(env[size_t(v->id())].to_tensor());
  return outs;
}

}  // namespace symmflow::exec
