// fuse_rows: a row-wise chain (elementwise ops and reductions over the last dim,
// keepdim, whose per-row results broadcast back over the rows) becomes one
// symmflow::fused_rows node (ops/fused_rows.h), which runs each step's own kernel
// on a block of whole rows that stays in cache: results stay bitwise equal to
// eager (DESIGN.md §3, step 7). RMSNorm as make_fx traces it:
//
//   before                                         after
//   %p = aten::pow(%x, 2)                          %y.1 = symmflow::fused_rows([%x, %w],
//   %m = aten::mean(%p, [-1], true)                  "aten::pow.Tensor_Scalar(x0, 2);
//   %a = aten::add(%m, 1e-06)                         aten::mean.dim(t0, [-1], true, None);
//   %r = aten::rsqrt(%a)                              aten::add.Tensor(t1, 1e-06, 1); aten::rsqrt(t2);
//   %n = aten::mul(%x, %r)                            aten::mul.Tensor(x0, t3); aten::mul.Tensor(t4, x1)")
//   %y = aten::mul(%n, %w)                         return %y.1
//   return %y
//
// Groups grow from a consumer to its producers (nodes visited last to first): a
// node joins the group that reads its result when
// - it is a fusible elementwise op (ops::is_fusible_pointwise) or a sum, mean,
//   amax or amin over the last dim only, keepdim, dtype None, run as written
//   (not in place, not a functional form of a write), with constant or tensor
//   arguments;
// - every tensor it reads or makes fits the group's widest shape [..., C]: that
//   shape or its per-row shape [..., 1], contiguous (what it makes: exactly one
//   of these two), one element, or a contiguous row [C];
// - every use of its result is in that one group, and it is not returned (an
//   intermediate read elsewhere must exist: the node stays out);
// - no node between it and the group's last node writes anything or
//   communicates (the fused node reads its inputs where the group ends).
// Groups of two nodes or more that hold a reduction are fused (the reduction's
// dims written [-1]); the others are left to fuse_pointwise, which runs next.
// A reduction over another dim ends a group: its per-row order would change.
#pragma once
#include "symmflow/passes/pass.h"

namespace symmflow::passes {

class FuseRows : public Pass {
 public:
  std::string_view name() const override { return "fuse_rows"; }
  bool run(ir::Graph& g) override;
};

}  // namespace symmflow::passes
