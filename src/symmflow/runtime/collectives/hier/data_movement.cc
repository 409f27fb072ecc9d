// Data movement between nodes for groups that span them: all_gather gathers
// each node's pieces at its leader and exchanges them between leaders;
// broadcast_ goes from the source to the other leaders, then through each
// node; all_to_all_single sends the rows for other nodes directly between the
// two ranks and the rest through the node's own all_to_all.
#include "symmflow/core/error.h"
#include "symmflow/runtime/collectives/hier/hier.h"

namespace symmflow::dist::detail {

using namespace hier;

CollectiveResult hier_all_gather(ProcessGroup& g, const Tensor& in, const Tensor& out) {
  const char* what = "all_gather (hierarchical)";
  CollectiveResult r;
  if (in.numel() == 0) return r;
  HierState& h = hier_state(g);
  h.begin_call(Kind::all_gather, in.dtype(), -1, -1, in.numel(), what);
  const bool leader = h.am_leader();
  const size_t bytes = in.nbytes(), total = out.nbytes();
  CollState* st = node_begin(h, Kind::all_gather, in, out, -1, total, true, r, what);
  if (leader) {
    NetLink& net = h.net();
    char* res = result_buffer(h, st, out, total);
    std::vector<NetLink::Request> pending;
    for (int node = 0; node < g.num_nodes(); ++node)
      if (node != g.node())
        for (int p : g.node_ranks(node))
          pending.push_back(net.irecv(res + size_t(p) * bytes, bytes, h.leader(node), kTagGather,
                                      NetLink::Lane::coll));
    // My node's pieces into place (each in rank order), then out to every other leader.
    const char* mine = own_input(h, in, r);
    for (int p : g.node_ranks(g.node())) {
      const char* src = input_of(h, st, p, mine);
      if (src != res + size_t(p) * bytes) copy_bytes(res + size_t(p) * bytes, src, bytes);
    }
    for (int node = 0; node < g.num_nodes(); ++node)
      if (node != g.node())
        for (int p : g.node_ranks(g.node()))
          pending.push_back(net.isend(res + size_t(p) * bytes, bytes, h.leader(node), kTagGather,
                                      NetLink::Lane::coll));
    net_wait_all(net, pending, site_of(g, what, -1), h.live());
    result_to_out(res, out, r);
  }
  node_end(st, leader, [&](const char* res) { copy_into(res, out, r); }, what);
  return r;
}

CollectiveResult hier_broadcast(ProcessGroup& g, const Tensor& t, int src) {
  const char* what = "broadcast_ (hierarchical)";
  CollectiveResult r;
  if (t.numel() == 0) return r;
  HierState& h = hier_state(g);
  h.begin_call(Kind::broadcast, t.dtype(), -1, src, t.numel(), what);
  NetLink& net = h.net();
  ProcessGroup& node_group = g.node_group();
  const size_t bytes = t.nbytes();
  const int src_node = g.node_of(src);
  std::vector<NetLink::Request> pending;
  if (g.rank() == src) {
    const char* mine = own_input(h, t, r);
    for (int node = 0; node < g.num_nodes(); ++node)
      if (node != src_node)
        pending.push_back(net.isend(mine, bytes, h.leader(node), kTagBcast, NetLink::Lane::coll));
  }
  if (g.node() == src_node) {
    if (node_group.size() > 1) {
      absorb(r, broadcast_(node_group, t, g.local_index(src)));
    }
  } else {
    if (h.am_leader()) {
      const bool direct = t.is_contiguous();
      char* dst = direct ? static_cast<char*>(t.data_ptr()) : static_cast<char*>(h.result.get(bytes));
      pending.push_back(net.irecv(dst, bytes, src, kTagBcast, NetLink::Lane::coll));
      net_wait_all(net, pending, site_of(g, what, src), h.live());
      if (!direct) {
        unpack(dst, t);
        count_staged(r, bytes);
      }
    }
    if (node_group.size() > 1) {
      absorb(r, broadcast_(node_group, t, 0));
    }
  }
  net_wait_all(net, pending, site_of(g, what, -1), h.live());
  return r;
}

CollectiveResult hier_all_to_all(ProcessGroup& g, const Tensor& in, const Tensor& out,
                                 const std::vector<int64_t>& out_splits,
                                 const std::vector<int64_t>& in_splits) {
  const char* what = "all_to_all_single (hierarchical)";
  CollectiveResult r;
  HierState& h = hier_state(g);
  NetLink& net = h.net();
  ProcessGroup& node_group = g.node_group();
  const int W = g.size();
  int64_t row = 1;
  for (int64_t d = 1; d < in.dim(); ++d) row *= in.size(d);
  h.begin_call(Kind::all_to_all, in.dtype(), -1, -1, row, what);
  const size_t row_bytes = size_t(row) * in.itemsize();
  // Contiguous stand-ins for strided tensors (counted).
  auto regular = [&](const Tensor& t) { return Tensor::empty_with(regular_allocator(), t.sizes(), t.dtype()); };
  Tensor in_dense = in, out_dense = out;
  if (!in.is_contiguous()) {
    in_dense = regular(in);
    pack(in, in_dense.data_ptr());
    count_staged(r, in.nbytes());
  }
  if (!out.is_contiguous()) out_dense = regular(out);
  std::vector<int64_t> in_at(size_t(W) + 1, 0), out_at(size_t(W) + 1, 0);
  for (int p = 0; p < W; ++p) {
    in_at[size_t(p) + 1] = in_at[size_t(p)] + in_splits[size_t(p)];
    out_at[size_t(p) + 1] = out_at[size_t(p)] + out_splits[size_t(p)];
  }
  char* ib = static_cast<char*>(in_dense.data_ptr());
  char* ob = static_cast<char*>(out_dense.data_ptr());
  // Other nodes: straight between the two ranks.
  std::vector<NetLink::Request> recvs, sends;
  std::vector<int> recv_from;
  for (int p = 0; p < W; ++p) {
    if (g.is_shm_reachable(p)) continue;
    recvs.push_back(net.irecv(ob + size_t(out_at[size_t(p)]) * row_bytes,
                              size_t(out_splits[size_t(p)]) * row_bytes, p, kTagA2A,
                              NetLink::Lane::coll));
    recv_from.push_back(p);
  }
  for (int p = 0; p < W; ++p)
    if (!g.is_shm_reachable(p))
      sends.push_back(net.isend(ib + size_t(in_at[size_t(p)]) * row_bytes,
                                size_t(in_splits[size_t(p)]) * row_bytes, p, kTagA2A,
                                NetLink::Lane::coll));
  // My node: its own all_to_all over the rows for its members. They are
  // consecutive rows when the members are consecutive ranks; otherwise packed.
  const std::vector<int>& mine = g.node_ranks(g.node());
  std::vector<int64_t> node_in_splits, node_out_splits;
  for (int p : mine) {
    node_in_splits.push_back(in_splits[size_t(p)]);
    node_out_splits.push_back(out_splits[size_t(p)]);
  }
  const bool consecutive = mine.back() - mine.front() + 1 == int(mine.size());
  auto rows_view = [&](const Tensor& t, int64_t r0, int64_t n) {
    Shape s = t.sizes();
    s[0] = n;
    return t.as_strided(s, t.strides(), t.storage_offset() + r0 * t.stride(0));
  };
  auto total = [](const std::vector<int64_t>& v) {
    int64_t s = 0;
    for (int64_t x : v) s += x;
    return s;
  };
  Tensor node_in, node_out;
  if (consecutive) {
    node_in = rows_view(in_dense, in_at[size_t(mine.front())], total(node_in_splits));
    node_out = rows_view(out_dense, out_at[size_t(mine.front())], total(node_out_splits));
  } else {
    Shape si = in_dense.sizes(), so = out_dense.sizes();
    si[0] = total(node_in_splits);
    so[0] = total(node_out_splits);
    node_in = Tensor::empty_with(regular_allocator(), si, in.dtype());
    node_out = Tensor::empty_with(regular_allocator(), so, in.dtype());
    int64_t at = 0;
    for (int p : mine) {
      copy_bytes(static_cast<char*>(node_in.data_ptr()) + size_t(at) * row_bytes,
                 ib + size_t(in_at[size_t(p)]) * row_bytes, size_t(in_splits[size_t(p)]) * row_bytes);
      at += in_splits[size_t(p)];
    }
    count_staged(r, node_in.nbytes());
  }
  if (node_group.size() > 1) {
    absorb(r, all_to_all_single(node_group, node_out, node_in, node_out_splits, node_in_splits));
  } else if (node_out.nbytes()) {
    copy_bytes(node_out.data_ptr(), node_in.data_ptr(), node_out.nbytes());
  }
  if (!consecutive) {
    int64_t at = 0;
    for (int p : mine) {
      copy_bytes(ob + size_t(out_at[size_t(p)]) * row_bytes,
                 static_cast<char*>(node_out.data_ptr()) + size_t(at) * row_bytes,
                 size_t(out_splits[size_t(p)]) * row_bytes);
      at += out_splits[size_t(p)];
    }
    count_staged(r, node_out.nbytes());
  }
  for (size_t k = 0; k < recvs.size(); ++k) {
    const int p = recv_from[k];
    const size_t got = net_wait(net, recvs[k], site_of(g, what, p), h.live());
    SF_CHECK(got == size_t(out_splits[size_t(p)]) * row_bytes,
             "all_to_all_single: rank {} sent {} rows to rank {}, which expects {} (its "
             "out_splits[{}])", p, got / std::max<size_t>(row_bytes, 1), g.rank(),
             out_splits[size_t(p)], p);
  }
  net_wait_all(net, sends, site_of(g, what, -1), h.live());
  if (!out.is_contiguous()) {
    unpack(out_dense.data_ptr(), out);
    count_staged(r, out.nbytes());
  }
  return r;
}

}  // namespace symmflow::dist::detail
