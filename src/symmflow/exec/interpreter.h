// The eager interpreter: runs a Graph op by op in program order, exactly as eager
// PyTorch runs the same program — in-place ops write their inputs, views share
// storage, P2P is asynchronous until c10d::wait_tensor. It is the reference that
// `symmflow run --check` compares compiled programs with, and it runs functional
// graphs too (a `functional` node runs on copies of what it writes), so a test can
// interpret the IR after any pass.
//
//   auto outs = run_eager(g, inputs);     // inputs: one IValue per graph input
#pragma once
#include <span>
#include <vector>

#include "symmflow/core/op_site.h"
#include "symmflow/ir/graph.h"
#include "symmflow/library/op_context.h"

namespace symmflow::exec {

// Runs one node: reads its arguments from env, writes its outputs into env. With
// `alloc`, the node's allocations come from it (a symmetric allocator for results
// that must be symmetric, see symmetric_needs).
// `ctx` carries services for the kernels (a compiled program's algorithm choice).
// An error leaving it names the op and its .sf location (core/op_site.h).
void run_node(const ir::Graph& g, const ir::Node& n, std::vector<IValue>& env, Allocator* alloc = nullptr,
              OpContext* ctx = nullptr);
// Node `n`'s op and location, for errors raised on its behalf outside
// run_node (the compiled program's group lookup): rethrow_at(site_of(g, n)).
OpSite site_of(const ir::Graph& g, const ir::Node& n);

std::vector<Tensor> run_eager(const ir::Graph& g, std::span<const IValue> inputs);

// Where a program needs symmetric memory, as a user of eager PyTorch would have
// arranged it: the storage of every argument an op registers as symmetric
// (register_symm_mem_args), traced back through views to the graph input or the
// node that creates it.
struct SymmetricNeeds {
  std::vector<bool> input;  // by graph input index
  std::vector<bool> node;   // by position in program order: allocate its results symmetric
};
SymmetricNeeds symmetric_needs(const ir::Graph& g);

}  // namespace symmflow::exec
