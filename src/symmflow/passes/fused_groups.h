// What the fusion passes (fuse_rows, fuse_pointwise) share: the program of a
// group of nodes, the fused node that runs it, and the graph rewrite that puts
// each fused node in its group's last node's place.
#pragma once
#include <string_view>
#include <utility>
#include <vector>

#include "symmflow/ir/graph.h"
#include "symmflow/ops/fused_pointwise.h"

namespace symmflow::passes {

// Whether t's elements are dense in row-major order (any storage offset): what a
// fused kernel's tiles view.
inline bool contiguous(const ir::TensorType& t) {
  return t.strides.empty() || t.strides == contiguous_strides(t.sizes);
}

// A group's external tensors, in first-use order, and its steps (members in
// program order; a member reads only inputs and earlier members' results).
struct FusedProgram {
  std::vector<ir::Value*> inputs;
  std::vector<ops::FusedStep> steps;
};
FusedProgram fused_program(const std::vector<ir::Node*>& members);

// `op` (symmflow::fused_pointwise or symmflow::fused_rows) over `p`, at the
// group's last node's location and with its result's type.
ir::Node* make_fused_node(ir::Graph& g, std::string_view op, const FusedProgram& p, const ir::Node& last);

// Each (group, fused node): the fused node takes the group's last node's place in
// program order and its name; the group's nodes leave the order. Every member
// but the last must be read only inside its group.
void place_fused(ir::Graph& g, const std::vector<std::pair<std::vector<ir::Node*>, ir::Node*>>& fused);

}  // namespace symmflow::passes
