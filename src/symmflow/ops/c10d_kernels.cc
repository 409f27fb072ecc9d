// CPU kernels of the c10d:: and symm_mem:: ops, over the runtime's collectives
// and P2P. Collectives run when called (their functional results are ready at
// once, so wait_tensor has nothing to wait for); P2P ops return immediately and
// register their Work for c10d::wait_tensor.
//
// Every op whose arguments are registered as needing symmetric memory checks, in
// eager mode, that they are: a regular tensor there is an error that says how to
// allocate it (the compiler, instead, plans such buffers in the symmetric arena).
#include "symmflow/kernels/copy.h"
#include "symmflow/kernels/views.h"
#include "symmflow/library/symm_mem_args.h"
#include "symmflow/ops/boxing.h"
#include "symmflow/ops/meta_util.h"
#include "symmflow/ops/work_registry.h"
#include "symmflow/runtime/collectives/collectives.h"
#include "symmflow/runtime/copy_stats.h"
#include "symmflow/runtime/p2p/p2p.h"
#include "symmflow/runtime/world.h"

namespace symmflow::ops {
namespace {

using dist::ProcessGroup;
using dist::ReduceOp;

ProcessGroup& group_arg(Args a, size_t i) { return dist::group(a[i].to_string()); }
ReduceOp reduce_arg(Args a, size_t i) { return dist::parse_reduce_op(a[i].to_string()); }

void check_group_size(const ProcessGroup& g, int64_t group_size, const char* op) {
  SF_CHECK(group_size == g.size(), "{}: group_size is {} but group '{}' has {} ranks", op,
           group_size, g.name(), g.size());
}

// The registry-driven eager check (see the file comment).
void check_symmetric_args(std::string_view op, Args a) {
  const Operator& o = Dispatcher::instance().get(op);
  for (const auto& name : symm_mem_args(o)) {
    size_t i = *o.schema().argument_index(name);
    auto check = [&](const IValue& v) {
      if (v.is_tensor())
        SF_CHECK(v.to_tensor().is_symmetric(),
                 "{}: argument '{}' must be in symmetric memory, got a regular {} (allocate it "
                 "with symm::empty or inside a symm::Scope)",
                 op, name, v.to_tensor().type_string());
    };
    if (a[i].is_list())
      for (const auto& v : a[i].to_list()) check(v);
    else
      check(a[i]);
  }
}

// The algorithm a compiled program chose for this node (collective_lowering),
// attached to the OpContext by the executor; automatic otherwise.
dist::AllReduceAlgo algo_of(const OpContext& ctx) {
  const auto* a = ctx.get<dist::AllReduceAlgo>();
  return a ? *a : dist::AllReduceAlgo::automatic;
}

// A compiled program starts a collective that a later c10d::wait_tensor
// completes (the executor attaches StartAsync): its Work is registered against
// the result, as P2P's is, and the wait finishes it. Otherwise it completes here.
void complete_or_register(const OpContext& ctx, const Tensor& result, dist::Work w) {
  if (ctx.get<StartAsync>())
    register_work(result, std::move(w));
  else
    w.wait();
}

Results all_reduce(OpContext& ctx, Args a) {
  const Tensor& in = tensor_arg(a, 0);
  Tensor out = empty_like(in);
  complete_or_register(ctx, out, dist::iall_reduce(group_arg(a, 2), out, in, reduce_arg(a, 1), algo_of(ctx)));
  return {out};
}
Results all_reduce_inplace(OpContext& ctx, Args a) {
  const Tensor& t = tensor_arg(a, 0);
  complete_or_register(ctx, t, dist::iall_reduce_(group_arg(a, 2), t, reduce_arg(a, 1), algo_of(ctx)));
  return {a[0]};
}
Results all_reduce_coalesced(OpContext& ctx, Args a) {
  IValueList out;
  for (const auto& v : a[0].to_list()) {
    Tensor o = empty_like(v.to_tensor());
    complete_or_register(ctx, o, dist::iall_reduce(group_arg(a, 2), o, v.to_tensor(), reduce_arg(a, 1), algo_of(ctx)));
    out.emplace_back(o);
  }
  return {IValue(std::move(out))};
}
Results all_reduce_coalesced_inplace(OpContext& ctx, Args a) {
  for (const auto& v : a[0].to_list())
    complete_or_register(ctx, v.to_tensor(),
                         dist::iall_reduce_(group_arg(a, 2), v.to_tensor(), reduce_arg(a, 1), algo_of(ctx)));
  return {a[0]};
}
Tensor gather_into(const OpContext& ctx, ProcessGroup& g, const Tensor& in, int64_t group_size, const char* op) {
  check_group_size(g, group_size, op);
  Tensor out = empty_with_type(in, gathered_shape(in, group_size, op));
  complete_or_register(ctx, out, dist::iall_gather(g, out, in));
  return out;
}
Results all_gather(OpContext& ctx, Args a) {
  return {gather_into(ctx, group_arg(a, 2), tensor_arg(a, 0), a[1].to_int(), "c10d::all_gather_into_tensor")};
}
Results all_gather_coalesced(OpContext& ctx, Args a) {
  IValueList out;
  for (const auto& v : a[0].to_list())
    out.emplace_back(gather_into(ctx, group_arg(a, 2), v.to_tensor(), a[1].to_int(),
                                 "c10d::all_gather_into_tensor_coalesced"));
  return {IValue(std::move(out))};
}
Results all_gather_out(OpContext& ctx, Args a) {
  const char* op = "c10d::all_gather_into_tensor_out";
  ProcessGroup& g = group_arg(a, 2);
  const Tensor& in = tensor_arg(a, 0);
  check_group_size(g, a[1].to_int(), op);
  check_out(tensor_arg(a, 3), in.dtype(), gathered_shape(in, a[1].to_int(), op), op, "out");
  complete_or_register(ctx, tensor_arg(a, 3), dist::iall_gather(g, tensor_arg(a, 3), in));
  return {a[3]};
}
Tensor scatter_into(const OpContext& ctx, ProcessGroup& g, const Tensor& in, ReduceOp rop, int64_t group_size,
                    const char* op) {
  check_group_size(g, group_size, op);
  Tensor out = empty_with_type(in, scattered_shape(in, group_size, op));
  complete_or_register(ctx, out, dist::ireduce_scatter(g, out, in, rop));
  return out;
}
Results reduce_scatter(OpContext& ctx, Args a) {
  return {scatter_into(ctx, group_arg(a, 3), tensor_arg(a, 0), reduce_arg(a, 1), a[2].to_int(),
                       "c10d::reduce_scatter_tensor")};
}
Results reduce_scatter_coalesced(OpContext& ctx, Args a) {
  IValueList out;
  for (const auto& v : a[0].to_list())
    out.emplace_back(scatter_into(ctx, group_arg(a, 3), v.to_tensor(), reduce_arg(a, 1), a[2].to_int(),
                                  "c10d::reduce_scatter_tensor_coalesced"));
  return {IValue(std::move(out))};
}
Results all_to_all_single(OpContext& ctx, Args a) {
  // The Meta kernel computes (and checks) the output type.
  OpContext meta(DispatchKey::Meta);
  std::vector<IValue> margs(a.begin(), a.end());
  margs[0] = Tensor::meta(tensor_arg(a, 0).sizes(), tensor_arg(a, 0).dtype());
  Shape shape = Dispatcher::instance().get("c10d::all_to_all_single").call(meta, margs)[0].to_tensor().sizes();
  Tensor out = empty_with_type(tensor_arg(a, 0), shape);
  auto out_splits = a[1].to_int_list(), in_splits = a[2].to_int_list();
  complete_or_register(ctx, out, dist::iall_to_all_single(group_arg(a, 3), out, tensor_arg(a, 0), out_splits, in_splits));
  return {out};
}
Results broadcast(OpContext& ctx, Args a) {
  Tensor out = kernels::clone(tensor_arg(a, 0));
  complete_or_register(ctx, out, dist::ibroadcast_(group_arg(a, 2), out, int(a[1].to_int())));
  return {out};
}
Results broadcast_inplace(OpContext& ctx, Args a) {
  const Tensor& t = tensor_arg(a, 0);
  complete_or_register(ctx, t, dist::ibroadcast_(group_arg(a, 2), t, int(a[1].to_int())));
  return {a[0]};
}
Results wait_tensor(OpContext&, Args a) {
  wait_registered(tensor_arg(a, 0));
  return {a[0]};
}
Results isend(OpContext& ctx, Args a) {
  const Tensor& t = tensor_arg(a, 0);
  const auto* rendezvous = ctx.get<SendsRendezvous>();
  if (rendezvous && !rendezvous->entries->empty() && (*rendezvous->entries)[0]) {  // never eager
    auto op = dist::P2POp::send(t, int(a[1].to_int()), int(a[2].to_int()));
    op.rendezvous = true;
    register_work(t, dist::batch_isend_irecv(group_arg(a, 3), {op}).at(0));
  } else {
    register_work(t, dist::isend(group_arg(a, 3), t, int(a[1].to_int()), int(a[2].to_int())));
  }
  return {a[0]};
}
Results irecv(OpContext&, Args a) {
  const Tensor& t = tensor_arg(a, 0);
  register_work(t, dist::irecv(group_arg(a, 3), t, int(a[1].to_int()), int(a[2].to_int())));
  return {a[0]};
}
Results batch_isend_irecv(OpContext& ctx, Args a) {
  OpContext meta(DispatchKey::Meta);
  Dispatcher::instance().get("c10d::batch_isend_irecv").call(meta, a);  // validates the lists
  auto kinds = a[0].to_string_list();
  auto peers = a[1].to_int_list();
  auto tags = a[2].to_int_list();
  auto tensors = a[3].to_tensor_list();
  const auto* rendezvous = ctx.get<SendsRendezvous>();
  std::vector<dist::P2POp> ops;
  for (size_t i = 0; i < kinds.size(); ++i) {
    ops.push_back(kinds[i] == "isend" ? dist::P2POp::send(tensors[i], int(peers[i]), int(tags[i]))
                                      : dist::P2POp::recv(tensors[i], int(peers[i]), int(tags[i])));
    ops.back().rendezvous = rendezvous && i < rendezvous->entries->size() && (*rendezvous->entries)[i];
  }
  auto works = dist::batch_isend_irecv(group_arg(a, 4), ops);
  for (size_t i = 0; i < works.size(); ++i) register_work(tensors[i], works[i]);
  return {a[3]};
}

// ---- symm_mem:: --------------------------------------------------------------

using dist::AllReduceAlgo;

template <AllReduceAlgo kAlgo>
Results symm_reduce(OpContext&, Args a) {  // (input, reduce_op, group_name) -> new
  const Tensor& in = tensor_arg(a, 0);
  Tensor out = empty_like(in);
  dist::all_reduce(group_arg(a, 2), out, in, reduce_arg(a, 1), kAlgo);
  return {out};
}
template <AllReduceAlgo kAlgo>
Results symm_reduce_out(OpContext&, Args a) {  // (input, reduce_op, group_name, out)
  const Tensor& in = tensor_arg(a, 0);
  check_out(tensor_arg(a, 3), in.dtype(), in.sizes(), "symm_mem all_reduce_out", "out");
  dist::all_reduce(group_arg(a, 2), tensor_arg(a, 3), in, reduce_arg(a, 1), kAlgo);
  return {a[3]};
}
template <AllReduceAlgo kAlgo>
Results symm_reduce_inplace(OpContext&, Args a) {
  dist::all_reduce_(group_arg(a, 2), tensor_arg(a, 0), reduce_arg(a, 1), kAlgo);
  return {a[0]};
}
// (symm_buffer, local_input, reduce_op, group_name[, out]): local_input is copied
// into symm_buffer (the op's own, explicit copy), then reduced one-shot.
Results symm_reduce_copy_into(Args a, const Tensor& out) {
  const Tensor& buf = tensor_arg(a, 0);
  const Tensor& in = tensor_arg(a, 1);
  Tensor staged = kernels::view(kernels::narrow(kernels::view(buf, {-1}), 0, 0, in.numel()), in.sizes());
  kernels::copy_(staged, in);
  dist::count_staged_copy(in.nbytes());
  dist::all_reduce(group_arg(a, 3), out, staged, reduce_arg(a, 2), AllReduceAlgo::one_shot);
  return {out};
}
Results symm_reduce_copy(OpContext&, Args a) { return symm_reduce_copy_into(a, empty_like(tensor_arg(a, 1))); }
Results symm_reduce_copy_out(OpContext&, Args a) {
  symm_reduce_copy_into(a, tensor_arg(a, 4));
  return {a[4]};
}
Results symm_two_shot_out(OpContext&, Args a) {  // (input(a!), reduce_op, group, output(b!))
  const Tensor& in = tensor_arg(a, 0);
  check_out(tensor_arg(a, 3), in.dtype(), in.sizes(), "symm_mem::two_shot_all_reduce_out", "output");
  dist::all_reduce_(group_arg(a, 2), in, reduce_arg(a, 1), AllReduceAlgo::two_shot);
  kernels::copy_(tensor_arg(a, 3), in);  // the result out of the symmetric input: counted, as the copy-in forms'
  dist::count_staged_copy(in.nbytes());
  return {a[3]};
}
Results symm_gather_out(OpContext&, Args a) {  // (input, group_name, out)
  dist::all_gather(group_arg(a, 1), tensor_arg(a, 2), tensor_arg(a, 0));
  return {a[2]};
}
// (input(a!), group_name, split_last_dim, output(b!)), sum. With split_last_dim the
// W chunks lie along the last dim: they are made leading with one counted copy.
Results symm_reduce_scatter_out(OpContext&, Args a) {
  ProcessGroup& g = group_arg(a, 1);
  const Tensor& in = tensor_arg(a, 0);
  const Tensor& out = tensor_arg(a, 3);
  if (!a[2].to_bool()) {
    dist::reduce_scatter(g, out, in, ReduceOp::sum);
    return {a[3]};
  }
  const int64_t last = in.size(-1), w = g.size();
  SF_CHECK(last % w == 0, "symm_mem::reduce_scatter_out: last dim of {} not divisible by {} ranks",
           in.type_string(), w);
  Shape split = in.sizes();
  split.back() = w;
  split.push_back(last / w);  // [..., W, n]
  Tensor chunks = kernels::view(in, split);
  Tensor leading = kernels::contiguous(kernels::transpose(chunks, -2, 0));  // [W, ..., n]
  dist::count_staged_copy(leading.nbytes());
  dist::reduce_scatter(g, out, leading, ReduceOp::sum);
  return {a[3]};
}
Results symm_tile_reduce(OpContext&, Args a) {  // (in_tile, out_tile, root, group, reduce_op)
  dist::tile_reduce(group_arg(a, 3), tensor_arg(a, 0), tensor_arg(a, 1), int(a[2].to_int()),
                    reduce_arg(a, 4));
  return {};
}

// Wraps a symm_mem kernel with the symmetric-argument check of its op.
Kernel checked(std::string op, Results (*fn)(OpContext&, Args)) {
  return [op = std::move(op), fn](OpContext& ctx, Args a) -> Results {
    check_symmetric_args(op, a);
    return fn(ctx, a);
  };
}

}  // namespace

SYMMFLOW_LIBRARY_IMPL(c10d, CPU, m) {
  m.impl("all_reduce", all_reduce);
  m.impl("all_reduce_", all_reduce_inplace);
  m.impl("all_reduce_coalesced", all_reduce_coalesced);
  m.impl("all_reduce_coalesced_", all_reduce_coalesced_inplace);
  m.impl("all_gather_into_tensor", all_gather);
  m.impl("all_gather_into_tensor_coalesced", all_gather_coalesced);
  m.impl("all_gather_into_tensor_out", all_gather_out);
  m.impl("reduce_scatter_tensor", reduce_scatter);
  m.impl("reduce_scatter_tensor_coalesced", reduce_scatter_coalesced);
  m.impl("all_to_all_single", all_to_all_single);
  m.impl("broadcast", broadcast);
  m.impl("broadcast_", broadcast_inplace);
  m.impl("wait_tensor", wait_tensor);
  m.impl("isend", isend);
  m.impl("irecv_", irecv);
  m.impl("batch_isend_irecv", batch_isend_irecv);
}

SYMMFLOW_LIBRARY_IMPL(symm_mem, CPU, m) {
  // CPU has no multicast: the multimem ops run the one-shot algorithm.
  m.impl("multimem_all_reduce_", checked("symm_mem::multimem_all_reduce_", symm_reduce_inplace<AllReduceAlgo::one_shot>));
  m.impl("multimem_one_shot_all_reduce", checked("symm_mem::multimem_one_shot_all_reduce", symm_reduce<AllReduceAlgo::one_shot>));
  m.impl("multimem_one_shot_all_reduce_out", checked("symm_mem::multimem_one_shot_all_reduce_out", symm_reduce_out<AllReduceAlgo::one_shot>));
  m.impl("multimem_all_gather_out", checked("symm_mem::multimem_all_gather_out", symm_gather_out));
  m.impl("one_shot_all_reduce", checked("symm_mem::one_shot_all_reduce", symm_reduce<AllReduceAlgo::one_shot>));
  m.impl("one_shot_all_reduce_out", checked("symm_mem::one_shot_all_reduce_out", symm_reduce_out<AllReduceAlgo::one_shot>));
  m.impl("one_shot_all_reduce_copy", checked("symm_mem::one_shot_all_reduce_copy", symm_reduce_copy));
  m.impl("one_shot_all_reduce_copy_out", checked("symm_mem::one_shot_all_reduce_copy_out", symm_reduce_copy_out));
  m.impl("two_shot_all_reduce_", checked("symm_mem::two_shot_all_reduce_", symm_reduce_inplace<AllReduceAlgo::two_shot>));
  m.impl("two_shot_all_reduce_out", checked("symm_mem::two_shot_all_reduce_out", symm_two_shot_out));
  m.impl("all_gather_out", checked("symm_mem::all_gather_out", symm_gather_out));
  m.impl("reduce_scatter_out", checked("symm_mem::reduce_scatter_out", symm_reduce_scatter_out));
  m.impl("tile_reduce", checked("symm_mem::tile_reduce", symm_tile_reduce));
}

}  // namespace symmflow::ops
