#include "symmflow/frontend/dist_api.h"

#include "symmflow/frontend/tracer.h"
#include "symmflow/runtime/world.h"

namespace symmflow::dist {

namespace {

using frontend::Tracer;

// Waiting on a traced P2P op records c10d::wait_tensor on its result.
Work traced_work(const Tensor& handle) {
  return Work::deferred([handle] { frontend::call("c10d::wait_tensor", {handle}); });
}

IValue op_name(ReduceOp op) { return IValue(std::string(reduce_op_name(op))); }

}  // namespace

CollectiveResult all_reduce_(const Tensor& t, ReduceOp op) {
  if (Tracer::active()) return frontend::call("c10d::all_reduce_", {t, op_name(op), "world"}), CollectiveResult{};
  return all_reduce_(world(), t, op);
}

CollectiveResult all_reduce(const Tensor& out, const Tensor& in, ReduceOp op) {
  if (Tracer::active()) {
    Tensor r = frontend::call_tensor("c10d::all_reduce", {in, op_name(op), "world"});
    frontend::call("aten::copy_", {out, r});
    return {};
  }
  return all_reduce(world(), out, in, op);
}

CollectiveResult all_gather(const Tensor& out, const Tensor& in) {
  if (Tracer::active()) {
    frontend::call("c10d::all_gather_into_tensor_out", {in, int64_t(world().size()), "world"}, {{"out", out}});
    return {};
  }
  return all_gather(world(), out, in);
}

CollectiveResult reduce_scatter(const Tensor& out, const Tensor& in, ReduceOp op) {
  if (Tracer::active()) {
    Tensor r = frontend::call_tensor("c10d::reduce_scatter_tensor", {in, op_name(op), int64_t(world().size()), "world"});
    frontend::call("aten::copy_", {out, r});
    return {};
  }
  return reduce_scatter(world(), out, in, op);
}

CollectiveResult all_to_all_single(const Tensor& out, const Tensor& in,
                                   const std::vector<int64_t>& out_splits,
                                   const std::vector<int64_t>& in_splits) {
  if (Tracer::active()) {
    Tensor r = frontend::call_tensor("c10d::all_to_all_single", {in, IValue(out_splits), IValue(in_splits), "world"});
    frontend::call("aten::copy_", {out, r});
    return {};
  }
  return all_to_all_single(world(), out, in, out_splits, in_splits);
}

CollectiveResult tile_reduce(const Tensor& in_tile, const Tensor& out_tile, int root, ReduceOp op) {
  if (Tracer::active()) {
    frontend::call("symm_mem::tile_reduce", {in_tile, out_tile, int64_t(root), "world", op_name(op)});
    return {};
  }
  return tile_reduce(world(), in_tile, out_tile, root, op);
}

CollectiveResult broadcast_(const Tensor& t, int src) {
  if (Tracer::active()) return frontend::call("c10d::broadcast_", {t, int64_t(src), "world"}), CollectiveResult{};
  return broadcast_(world(), t, src);
}

Work isend(const Tensor& t, int dst, int tag) {
  if (Tracer::active()) return traced_work(frontend::call_tensor("c10d::isend", {t, int64_t(dst), int64_t(tag), "world"}));
  return isend(world(), t, dst, tag);
}

Work irecv(const Tensor& t, int src, int tag) {
  if (Tracer::active()) return traced_work(frontend::call_tensor("c10d::irecv_", {t, int64_t(src), int64_t(tag), "world"}));
  return irecv(world(), t, src, tag);
}

std::vector<Work> batch_isend_irecv(const std::vector<P2POp>& ops) {
  if (!Tracer::active()) return batch_isend_irecv(world(), ops);
  std::vector<std::string> kinds;
  std::vector<int64_t> peers, tags;
  std::vector<Tensor> tensors;
  for (const auto& op : ops) {
    kinds.push_back(op.kind == P2POp::Kind::send ? "isend" : "irecv");
    peers.push_back(op.peer);
    tags.push_back(op.tag);
    tensors.push_back(op.tensor);
  }
  auto r = frontend::call("c10d::batch_isend_irecv", {IValue(kinds), IValue(peers), IValue(tags), IValue(tensors), "world"});
  std::vector<Work> works;
  for (const auto& h : r.at(0).to_list()) works.push_back(traced_work(h.to_tensor()));
  return works;
}

}  // namespace symmflow::dist
