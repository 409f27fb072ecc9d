#include "symmflow/ir/alias.h"

namespace symmflow::ir {

std::vector<Value*> output_storage_sources(const Node& n) {
  std::vector<Value*> src = n.output_aliases();
  if (!n.functional()) {
    const auto& slots = n.output_slots();
    for (size_t i = 0; i < slots.size(); ++i)
      if (slots[i]) src[i] = n.value_at(*slots[i]);
  }
  return src;
}

ViewExtent::ViewExtent(const TensorType& t)
    : sizes(t.sizes),
      strides(t.strides.empty() ? contiguous_strides(t.sizes) : t.strides),
      offset(t.offset),
      itemsize(int64_t(element_size(t.dtype))) {}

std::vector<Value*> storage_roots(const Graph& g) {
  std::vector<Value*> root(g.num_values(), nullptr);
  for (Value* in : g.inputs()) root[size_t(in->id())] = in;
  for (const Node* n : g.nodes()) {
    auto src = output_storage_sources(*n);
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      Value* o = n->output(i);
      Value* s = i < src.size() ? src[i] : nullptr;
      root[size_t(o->id())] = s && root[size_t(s->id())] ? root[size_t(s->id())] : o;
    }
  }
  return root;
}

}  // namespace symmflow::ir
