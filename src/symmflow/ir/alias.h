// Which values share storage. A view's result, a `Tensor(a!)` return of an op run
// in place, the tensors a P2P op hands back and c10d::wait_tensor's result all
// share their input's storage; every other result is fresh. Works on imperative
// and functional graphs alike (a functional node's written outputs are fresh).
//
//   auto root = storage_roots(g);
//   bool same = root[a->id()] == root[b->id()];
//   bool meet = views_share_bytes(ViewExtent(a->type()).view(), ViewExtent(b->type()).view());
#pragma once
#include <vector>

#include "symmflow/core/overlap.h"
#include "symmflow/ir/graph.h"

namespace symmflow::ir {

// Indexed by Value::id: the graph input or fresh result whose storage the value
// uses (itself when it owns its storage). Values not reached are nullptr.
std::vector<Value*> storage_roots(const Graph& g);

// For each output of n: the input value it shares storage with, or nullptr.
std::vector<Value*> output_storage_sources(const Node& n);

// Where a value of this type lies in its storage (core/overlap.h's questions
// asked of a type), owning what ViewGeometry points at: empty strides are
// spelled out as the contiguous ones.
struct ViewExtent {
  Shape sizes, strides;
  int64_t offset = 0, itemsize = 1;
  explicit ViewExtent(const TensorType& t);
  ViewGeometry view() const { return {sizes, strides, offset, itemsize}; }
};

}  // namespace symmflow::ir
