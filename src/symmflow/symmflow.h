// symmflow: distributed tensor programs with in-place collectives, point-to-point
// and symmetric memory as first-class citizens. One include for users:
//
//   #include <symmflow/symmflow.h>
//   namespace sf = symmflow;
//
//   int main() {
//     sf::dist::init();                                  // from `symmflow launch`'s environment
//     auto x = sf::symm::empty({1 << 20}, sf::DType::f32); // symmetric: same offset on every rank
//     sf::kernels::fill_(x, sf::dist::world().rank() + 1);
//     sf::dist::all_reduce_(x);                          // sum over ranks, in place, zero copy
//   }
//
//   $ symmflow launch --nproc 2 -- ./my_program
#pragma once

#include "symmflow/core/ivalue.h"
#include "symmflow/core/scalar.h"
#include "symmflow/core/tensor.h"
#include "symmflow/kernels/copy.h"
#include "symmflow/kernels/factories.h"
#include "symmflow/kernels/matmul.h"
#include "symmflow/kernels/pointwise.h"
#include "symmflow/kernels/reduce.h"
#include "symmflow/kernels/views.h"
#include "symmflow/runtime/collectives.h"
#include "symmflow/runtime/copy_stats.h"
#include "symmflow/runtime/p2p.h"
#include "symmflow/runtime/symm.h"
#include "symmflow/runtime/world.h"

namespace symmflow::dist {

// The world-group forms of the collectives, as torch.distributed spells them.
inline CollectiveResult all_reduce_(const Tensor& t, ReduceOp op = ReduceOp::sum) {
  return all_reduce_(world(), t, op);
}
inline CollectiveResult all_gather(const Tensor& in, const Tensor& out) { return all_gather(world(), in, out); }
inline CollectiveResult reduce_scatter(const Tensor& in, const Tensor& out, ReduceOp op = ReduceOp::sum) {
  return reduce_scatter(world(), in, out, op);
}
inline CollectiveResult broadcast_(const Tensor& t, int src) { return broadcast_(world(), t, src); }
inline Work isend(const Tensor& t, int dst, int tag = 0) { return isend(world(), t, dst, tag); }
inline Work irecv(const Tensor& t, int src, int tag = 0) { return irecv(world(), t, src, tag); }
inline std::vector<Work> batch_isend_irecv(const std::vector<P2POp>& ops) {
  return batch_isend_irecv(world(), ops);
}

}  // namespace symmflow::dist
