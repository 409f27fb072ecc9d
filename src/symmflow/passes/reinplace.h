// reinplace: functional ops run in place again wherever the old value of what
// they write is dead afterwards; otherwise on an explicit, counted aten::clone.
//
//   before                                      after
//   %v = aten::slice(%x, 0, 0, 2)               %v = aten::slice(%x, 0, 0, 2)
//   %v.1 = functional aten::add_(%v, 1.0)       %v.1 = aten::add_(%v, 1.0)
//   %x.1 = aten::as_strided_scatter(%x, ...)    aten::copy_ (epilogue) removed:
//   aten::copy_(%x, %x.1)                       %x already holds the result
//   return %x.1                                 return %x
//
//   %y = c10d::all_reduce(%x, "sum", "world")   %y = c10d::all_reduce_(%x, "sum", "world")
//   # %x unused afterwards                      # no copy, no new buffer (PyTorch 134388 copies)
//
// By bytes (rule 10): a double buffer %buf = zeros([2, 4, 2]), %b0/%b1 its halves.
//   before                                      after
//   %s, %r = functional batch_isend_irecv(      %s, %r = batch_isend_irecv(
//       ..., [%b0, %b1], "world")                   ..., [%b0, %b1], "world")
//   %a = aten::mul(%b0, 2.0)                    %a = aten::mul(%b0, 2.0)
//   c10d::wait_tensor(%s)                       c10d::wait_tensor(%s)
//   %w = c10d::wait_tensor(%r)                  %w = c10d::wait_tensor(%r)
//   %buf.1 = aten::as_strided_scatter(          (the scatter disappears: %w is %b1)
//       %buf, %w, [4, 2], [2, 1], 8)
//   # %buf is still read (%b0, by the batch and %a) but only in bytes 0..7:
//   # by storage %b1 was cloned (a counted copy), by bytes the receive is in place.
//
// Rules, in order, for a node n that writes (functional) or has an in-place twin:
// 1. Storage classes: values sharing a buffer (views, aliases, in-flight P2P
//    handles) form one class; a read of any member after n is a read of the old data.
// 2. The graph's outputs and the inputs it does not write are read "at the end":
//    their buffers are never written in place.
// 3. n may write in place if no node after n reads the class of what it writes —
//    except the as_strided_scatter that writes n's result (or, for a receive,
//    its wait's result) back to exactly that place (it becomes a no-op and
//    disappears).
// 4. A result whose layout changes by this (a view's region instead of a fresh
//    buffer) must have no view ops among its readers, whose types would change.
// 5. Otherwise a functional node writes an explicit aten::clone (noted "copy:")
//    and a functional twin (add, all_reduce) stays out of place (no copy either).
// 6. A graph input's epilogue copy_ disappears when the final value already
//    lives in the input's buffer.
// 7. n may not write in place a buffer it also reads through another argument,
//    except an aten op reading the same elements (x.add_(x)).
// 8. The epilogue copy_ of a written input writes the input's buffer at the end:
//    a result read at the end (returned) may take that buffer only if it is the
//    final value the epilogue copies. (%t = clamp(%x) returned, then clamp_(%x):
//    after cse %t is the new %x, but the epilogue copies a later version into %x.)
// 9. A result read at the end (returned) is not written in place into a class
//    a communication op uses (symm_placement, after this pass, puts those in
//    symmetric memory): it would live in the arena and
//    every run would copy it out; its twin stays functional and its kernel writes
//    the caller's fresh output (%r = relu(all_reduce_ result) returned: 0 copies).
// 10. Rules 3 and 7 by bytes (passes/read_footprints.h): a later read, or another
//    argument of n, in the target's class counts only if it shares a byte with
//    the target; a view op reads no byte. A functional node's results decide
//    together: one may count on the scatter of another disappearing only if that
//    one runs in place too. Not for a buffer (any version of it) that a
//    collective or effect op touches: its offset may depend on the rank, and the
//    collective region must be planned alike on every rank; and not for rule 5's
//    twins (in place there saves a buffer, not a copy). Those decide per storage.
#pragma once
#include "symmflow/passes/pass.h"

namespace symmflow::passes {

class Reinplace : public Pass {
 public:
  std::string_view name() const override { return "reinplace"; }
  bool run(ir::Graph& g) override;
};

}  // namespace symmflow::passes
