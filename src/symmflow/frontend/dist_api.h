// The world-group collectives and P2P as torch.distributed spells them, usable
// in code that sf::compile traces: eagerly they run on the runtime (zero copy
// on symmetric tensors); inside a trace they record c10d:: ops, and a P2P Work's
// wait() records c10d::wait_tensor on that op's result.
//
//   auto works = dist::batch_isend_irecv({dist::P2POp::send(x, next), dist::P2POp::recv(y, prev)});
//   Tensor t = x * 2 + 1;                 // overlaps the transfer
//   for (auto& w : works) w.wait();       // y is ready, x may be written
#pragma once
#include <vector>

#include "symmflow/runtime/collectives/collectives.h"
#include "symmflow/runtime/p2p/p2p.h"

namespace symmflow::dist {

// Output before input where torch.distributed puts it there.
CollectiveResult all_reduce_(const Tensor& t, ReduceOp op = ReduceOp::sum);
CollectiveResult all_reduce(const Tensor& out, const Tensor& in, ReduceOp op = ReduceOp::sum);
CollectiveResult all_gather(const Tensor& out, const Tensor& in);
CollectiveResult reduce_scatter(const Tensor& out, const Tensor& in, ReduceOp op = ReduceOp::sum);
CollectiveResult all_to_all_single(const Tensor& out, const Tensor& in,
                                   const std::vector<int64_t>& out_splits = {},
                                   const std::vector<int64_t>& in_splits = {});
CollectiveResult broadcast_(const Tensor& t, int src);
CollectiveResult tile_reduce(const Tensor& in_tile, const Tensor& out_tile, int root,
                             ReduceOp op = ReduceOp::sum);
Work isend(const Tensor& t, int dst, int tag = 0);
Work irecv(const Tensor& t, int src, int tag = 0);
std::vector<Work> batch_isend_irecv(const std::vector<P2POp>& ops);

}  // namespace symmflow::dist
