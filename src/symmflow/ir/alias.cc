#include "symmflow/ir/alias.h"

namespace symmflow::ir {

std::vector<Value*> output_storage_sources(const Node& n) {
  std::vector<Value*> src(n.output_slots().size());
  for (size_t i = 0; i < src.size(); ++i) src[i] = n.output_storage_source(i);
  return src;
}

ViewExtent::ViewExtent(const TensorType& t)
    : sizes(t.sizes.to_vector()),
      strides(t.full_strides()),
      offset(t.offset),
      itemsize(int64_t(element_size(t.dtype))) {}

std::vector<Value*> storage_roots(const Graph& g) {
  std::vector<Value*> root(g.num_values(), nullptr);
  for (Value* in : g.inputs()) root[size_t(in->id())] = in;
  for (const Node* n : g.nodes()) {
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      Value* o = n->output(i);
      Value* s = n->output_storage_source(i);
      root[size_t(o->id())] = s && root[size_t(s->id())] ? root[size_t(s->id())] : o;
    }
  }
  return root;
}

}  // namespace symmflow::ir
