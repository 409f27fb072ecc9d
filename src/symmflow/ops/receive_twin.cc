// symmflow::receive_twin(Tensor x, Tensor(a!)[] received) -> Tensor: the buffer that stands in for
// the rows of a graph input that P2P receives into (passes/receive_twins.h).
// It has x's layout (sizes, strides, storage offset), so a view of x and the
// same as_strided view of the twin name the same elements. When x is already
// symmetric the twin is x itself: a peer can write it where it is, and the
// compiled program copies nothing. Otherwise it is a fresh buffer (the memory
// plan's, in the symmetric arena), not filled: only what is received into it
// is ever read, and those rows are copied back into x after the run.
//
// `received` are the views of x the program receives into, declared written
// (the op writes nothing): the op stands where the first receive was, and every
// earlier access of those rows stays before it (when the twin is x, a receive
// into it may not overtake a read of the old rows), while the rest of x is only
// read and moves freely around it.
#include "symmflow/kernels/copy.h"
#include "symmflow/ops/boxing.h"

namespace symmflow::ops {
namespace {

SYMMFLOW_LIBRARY_FRAGMENT(symmflow, m) {
  m.def("receive_twin(Tensor x, Tensor(a!)[] received) -> Tensor");
  impl_both(m, "receive_twin", [](OpContext&, Args a) -> Results {
    const Tensor& x = tensor_arg(a, 0);
    if (x.is_symmetric()) return {x};
    return {kernels::empty_layout(x)};
  });
}

}  // namespace
}  // namespace symmflow::ops
