// Pending point-to-point work, keyed by the tensor a c10d op returned: c10d's
// functional P2P ops (isend, irecv_, batch_isend_irecv) return their tensor at
// once, and c10d::wait_tensor(t) waits for the work that still owns t — as
// PyTorch's functional collectives register their Work against the output.
#pragma once
#include <vector>
#include "symmflow/core/tensor.h"
#include "symmflow/runtime/p2p/p2p.h"

namespace symmflow::ops {

void register_work(const Tensor& t, dist::Work work);
// Attached to a kernel's OpContext by the compiled program's executor: start the
// collective and register its Work (a later c10d::wait_tensor completes it)
// instead of completing it in the kernel (passes/comm_ops.h).
struct StartAsync {};
// The executor's note to c10d::isend and c10d::batch_isend_irecv: entry i is a
// send that waits for its receive's post instead of going eager
// (dist::P2POp::rendezvous; ir::Instruction::rendezvous says when).
struct SendsRendezvous {
  const std::vector<bool>* entries;  // the plan's, per batch entry
};
// Waits for and forgets every work registered for t's TensorImpl; if there is
// none, for every work on t's storage (a view of a buffer in flight). Returns
// how many works it waited for.
int wait_registered(const Tensor& t);
// Pending works (tests use it to check that nothing is left behind).
size_t pending_work_count();

}  // namespace symmflow::ops
