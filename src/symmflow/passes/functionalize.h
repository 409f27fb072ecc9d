// functionalize: every mutation becomes a new SSA value (seeds 000 and 001).
//
//   before                                   after
//   %v = aten::slice(%x, 0, 0, 2)            %v = aten::slice(%x, 0, 0, 2)
//   aten::add_(%v, 1.0)                      %v1 = aten::add(%v, 1.0)
//   %y = aten::mul(%x, 2.0)                  %x1 = aten::as_strided_scatter(%x, %v1, [2], [1], 0)
//   return %y                                %y = aten::mul(%x1, 2.0)
//                                            aten::copy_(%x, %x1)      # %x is a graph input
//                                            return %y
//
// - An aten in-place op whose result has its input's type becomes its functional
//   twin (add_ -> add); every other writing op (out=, `-> ()`, `Tensor(a!) ->
//   Tensor(a!)`, `Tensor[](a!)`, batch_isend_irecv's receives) becomes `functional
//   OP(...)`, whose results are the new values (docs/ir.md) — no schema changes.
// - A write through a view is written back into its storage's newest version with
//   aten::as_strided_scatter; a later use of any view of that storage replays the
//   view ops on the newest version.
// - P2P receives are in flight until c10d::wait_tensor: the write-back of a
//   receive into a view happens after the wait, and the wait's result is the new
//   version (so nothing reads the buffer before its wait).
// - Only view ops are replayed on a newer version. A P2P result that aliases its
//   input (c10d::isend's) is another name for that tensor: a later use of it
//   after the tensor was written reads the tensor's newest version (rebuilt as
//   the tensor would be), never a second isend.
// - A graph input that the program writes gets one aten::copy_ at the end
//   (the epilogue), nothing else.
// - Collectives and P2P keep their program order (an effect chain per group):
//   this pass never reorders nodes.
#pragma once
#include <unordered_map>

#include "symmflow/passes/pass.h"

namespace symmflow::passes {

class Functionalize : public Pass {
 public:
  std::string_view name() const override { return "functionalize"; }
  bool run(ir::Graph& g) override;
};

// The functional twin of an aten in-place op (`aten::add_.Tensor` ->
// `aten::add.Tensor`), or nullptr.
Operator* functional_twin(const Operator& op);
// The in-place twin of a functional op (`aten::add.Tensor` -> `aten::add_.Tensor`,
// `c10d::all_reduce` -> `c10d::all_reduce_`), or nullptr.
Operator* inplace_twin(const Operator& op);

// One of the two above, asked once per operator: the lookup builds names and
// compares schemas, and a pass asks per node (the registry does not change
// while a pass runs).
class TwinCache {
 public:
  explicit TwinCache(Operator* (*lookup)(const Operator&)) : lookup_(lookup) {}
  Operator* operator()(const Operator& op) {
    auto [it, fresh] = twins_.try_emplace(&op, nullptr);
    if (fresh) it->second = lookup_(op);
    return it->second;
  }

 private:
  Operator* (*lookup_)(const Operator&);
  std::unordered_map<const Operator*, Operator*> twins_;
};

}  // namespace symmflow::passes
