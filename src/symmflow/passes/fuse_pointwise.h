// fuse_pointwise: a chain of elementwise ops becomes one symmflow::fused_pointwise
// node (ops/fused_pointwise.h), which reads the chain's inputs once and writes its
// result once, tile by tile, with the same kernels in the same order as eager:
// results stay bitwise equal (DESIGN.md §3, step 7).
//
//   before                                     after
//   %a = aten::add(%x, %b)                     %e.1 = symmflow::fused_pointwise([%x, %b],
//   %g = aten::gelu(%a)                          "aten::add.Tensor(x0, x1, 1); aten::gelu(t0, 'none');
//   %e = aten::exp(%g)                            aten::exp(t1)")
//   return %e                                  return %e.1
//
// A group grows from a node to the next one that reads its result, when:
// - both are fusible elementwise ops (ops::is_fusible_pointwise) run as written
//   (not in place, not functional forms of writes), with constant or tensor
//   arguments, and both results have the group's shape, contiguous;
// - every tensor operand is one a tile can take: the result's shape
//   (contiguous, or any strides at rank 1 or 2: a stencil's column slices of a
//   grid), one element, or a contiguous row ([C] of a [..., C] result);
// - the result it extends from is read by that next node alone and is not
//   returned (an intermediate read elsewhere ends the group: it must exist).
//   A node that reads the results of two groups joins both, and they merge:
//   groups are trees, each intermediate read once;
//
//   before (one stencil step)                  after
//   %ns = aten::add(%n, %s)                    %new.1 = symmflow::fused_pointwise([%n, %s, %w, %e, %c],
//   %we = aten::add(%w, %e)                      "aten::add.Tensor(x0, x1, 1); aten::add.Tensor(x2, x3, 1);
//   %sum = aten::add(%ns, %we)                    aten::add.Tensor(t0, t1, 1); aten::mul.Scalar(x4, 4.0);
//   %c4 = aten::mul(%c, 4.0)                      aten::sub.Tensor(t2, t3, 1); ...")
//   %lap = aten::sub(%sum, %c4)   ...
// - no node between them writes anything or communicates: the fused node reads
//   its inputs where the chain's last node was, so nothing may change them in
//   between (a pure node in between, a view or a matmul, is fine).
// Chains of one node stay as they are.
#pragma once
#include "symmflow/passes/pass.h"

namespace symmflow::passes {

class FusePointwise : public Pass {
 public:
  std::string_view name() const override { return "fuse_pointwise"; }
  bool run(ir::Graph& g) override;
};

}  // namespace symmflow::passes
