// c10d:: — collectives and point-to-point with PyTorch's _c10d_functional schemas.
// Functional ops return a tensor that is valid only after c10d::wait_tensor;
// `_` ops mutate their input and return it (the alias their schema declares).
// This file registers the schemas and the Meta kernels (types only); the CPU
// kernels come from the runtime (c10d_kernels.cc).
#include "symmflow/library/library.h"
#include "symmflow/ops/meta_util.h"

namespace symmflow::ops {
namespace {

using Args = std::span<const IValue>;
using Out = std::vector<IValue>;

IValue empty_like_list(const IValue& l) {
  IValueList out;
  for (const auto& t : l.to_list()) out.emplace_back(empty_like(t.to_tensor()));
  return IValue(std::move(out));
}

Out all_reduce_meta(OpContext&, Args a) {
  check_reduce_op(a[1].to_string(), "c10d::all_reduce");
  return {empty_like(a[0].to_tensor())};
}
Out all_reduce_inplace_meta(OpContext&, Args a) {
  check_reduce_op(a[1].to_string(), "c10d::all_reduce_");
  return {a[0]};
}
Out all_reduce_coalesced_meta(OpContext&, Args a) {
  check_reduce_op(a[1].to_string(), "c10d::all_reduce_coalesced");
  return {empty_like_list(a[0])};
}
Out all_reduce_coalesced_inplace_meta(OpContext&, Args a) {
  check_reduce_op(a[1].to_string(), "c10d::all_reduce_coalesced_");
  return {a[0]};
}
Out all_gather_meta(OpContext&, Args a) {
  const Tensor& t = a[0].to_tensor();
  return {empty_with_type(t, gathered_shape(t, a[1].to_int(), "c10d::all_gather_into_tensor"))};
}
Out all_gather_coalesced_meta(OpContext&, Args a) {
  IValueList out;
  for (const auto& v : a[0].to_list()) {
    const Tensor& t = v.to_tensor();
    out.emplace_back(empty_with_type(
        t, gathered_shape(t, a[1].to_int(), "c10d::all_gather_into_tensor_coalesced")));
  }
  return {IValue(std::move(out))};
}
Out all_gather_out_meta(OpContext&, Args a) {
  const Tensor& t = a[0].to_tensor();
  const char* op = "c10d::all_gather_into_tensor_out";
  check_out(a[3].to_tensor(), t.dtype(), gathered_shape(t, a[1].to_int(), op), op, "out");
  return {a[3]};
}
Out reduce_scatter_meta(OpContext&, Args a) {
  const Tensor& t = a[0].to_tensor();
  check_reduce_op(a[1].to_string(), "c10d::reduce_scatter_tensor");
  return {empty_with_type(t, scattered_shape(t, a[2].to_int(), "c10d::reduce_scatter_tensor"))};
}
Out reduce_scatter_coalesced_meta(OpContext&, Args a) {
  check_reduce_op(a[1].to_string(), "c10d::reduce_scatter_tensor_coalesced");
  IValueList out;
  for (const auto& v : a[0].to_list()) {
    const Tensor& t = v.to_tensor();
    out.emplace_back(empty_with_type(
        t, scattered_shape(t, a[2].to_int(), "c10d::reduce_scatter_tensor_coalesced")));
  }
  return {IValue(std::move(out))};
}
Out all_to_all_single_meta(OpContext&, Args a) {
  const Tensor& t = a[0].to_tensor();
  auto out_splits = a[1].to_int_list();
  auto in_splits = a[2].to_int_list();
  SF_CHECK(t.dim() >= 1, "c10d::all_to_all_single: expected at least 1-D input, got {}",
           t.type_string());
  if (!in_splits.empty()) {
    int64_t total = 0;
    for (int64_t s : in_splits) total += s;
    SF_CHECK(total == t.size(0),
             "c10d::all_to_all_single: input_split_sizes sum to {} but the input has {} rows",
             total, t.size(0));
  }
  Shape s = t.sizes();
  if (!out_splits.empty()) {
    s[0] = 0;
    for (int64_t v : out_splits) s[0] += v;
  }
  return {empty_with_type(t, s)};
}
Out broadcast_meta(OpContext&, Args a) { return {empty_like(a[0].to_tensor())}; }
Out identity_first(OpContext&, Args a) { return {a[0]}; }

Out batch_isend_irecv_meta(OpContext&, Args a) {
  auto kinds = a[0].to_string_list();
  auto peers = a[1].to_int_list();
  auto tags = a[2].to_int_list();
  const auto& tensors = a[3].to_list();
  SF_CHECK(kinds.size() == peers.size() && kinds.size() == tags.size() &&
               kinds.size() == tensors.size(),
           "c10d::batch_isend_irecv: op_types, peers, tags and tensors must have one entry each "
           "per operation (got {}, {}, {}, {})",
           kinds.size(), peers.size(), tags.size(), tensors.size());
  for (const auto& k : kinds)
    SF_CHECK(k == "isend" || k == "irecv",
             "c10d::batch_isend_irecv: op_types entries must be \"isend\" or \"irecv\", got \"{}\"",
             k);
  return {a[3]};  // one result per entry: the tensor it sends or receives into
}

// Only the irecv entries of batch_isend_irecv write their tensor.
std::vector<MutatedSlot> batch_isend_irecv_mutations(Args a) {
  std::vector<MutatedSlot> out;
  auto kinds = a[0].to_string_list();
  for (size_t i = 0; i < kinds.size(); ++i)
    if (kinds[i] == "irecv") out.push_back(MutatedSlot{3, int64_t(i)});
  return out;
}

}  // namespace

SYMMFLOW_LIBRARY(c10d, m) {
  m.def("all_reduce(Tensor input, str reduce_op, str group_name) -> Tensor");
  m.def("all_reduce_(Tensor(a!) input, str reduce_op, str group_name) -> Tensor(a!)");
  m.def("all_reduce_coalesced(Tensor[] inputs, str reduce_op, str group_name) -> Tensor[]");
  m.def("all_reduce_coalesced_(Tensor[](a!) inputs, str reduce_op, str group_name) -> Tensor[](a!)");
  m.def("all_gather_into_tensor(Tensor input, int group_size, str group_name) -> Tensor");
  m.def("all_gather_into_tensor_coalesced(Tensor[] inputs, int group_size, str group_name) -> Tensor[]");
  m.def("all_gather_into_tensor_out(Tensor input, int group_size, str group_name, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("reduce_scatter_tensor(Tensor input, str reduce_op, int group_size, str group_name) -> Tensor");
  m.def("reduce_scatter_tensor_coalesced(Tensor[] inputs, str reduce_op, int group_size, str group_name) -> Tensor[]");
  m.def("all_to_all_single(Tensor input, SymInt[] output_split_sizes, SymInt[] input_split_sizes, str group_name) -> Tensor");
  m.def("broadcast(Tensor input, int src, str group_name) -> Tensor");
  m.def("broadcast_(Tensor(a!) input, int src, str group_name) -> Tensor(a!)");
  m.def("wait_tensor(Tensor tensor) -> Tensor");
  // Point-to-point (not in _c10d_functional; shaped like it). Each result is its
  // tensor (an alias, in flight): it must pass wait_tensor before a send buffer is
  // written or a receive buffer is read. A receive writes its tensor in place.
  m.def("isend(Tensor(a) input, int dst, int tag, str group_name) -> Tensor(a)");
  m.def("irecv_(Tensor(a!) out, int src, int tag, str group_name) -> Tensor(a!)");
  m.def("batch_isend_irecv(str[] op_types, int[] peers, int[] tags, Tensor(a!)[] tensors, str group_name) -> Tensor(a)[]");
  m.set_mutation_resolver("batch_isend_irecv", batch_isend_irecv_mutations);
}

SYMMFLOW_LIBRARY_IMPL(c10d, Meta, m) {
  m.impl("all_reduce", all_reduce_meta);
  m.impl("all_reduce_", all_reduce_inplace_meta);
  m.impl("all_reduce_coalesced", all_reduce_coalesced_meta);
  m.impl("all_reduce_coalesced_", all_reduce_coalesced_inplace_meta);
  m.impl("all_gather_into_tensor", all_gather_meta);
  m.impl("all_gather_into_tensor_coalesced", all_gather_coalesced_meta);
  m.impl("all_gather_into_tensor_out", all_gather_out_meta);
  m.impl("reduce_scatter_tensor", reduce_scatter_meta);
  m.impl("reduce_scatter_tensor_coalesced", reduce_scatter_coalesced_meta);
  m.impl("all_to_all_single", all_to_all_single_meta);
  m.impl("broadcast", broadcast_meta);
  m.impl("broadcast_", identity_first);
  m.impl("wait_tensor", identity_first);
  m.impl("isend", identity_first);
  m.impl("irecv_", identity_first);
  m.impl("batch_isend_irecv", batch_isend_irecv_meta);
}

}  // namespace symmflow::ops
