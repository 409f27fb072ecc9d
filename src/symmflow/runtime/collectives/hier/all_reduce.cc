// Collectives of groups that span nodes (mpi backend): shared memory inside
// each node (the node group's pull protocol, ../coll_state.h), the group's
// NetLink between nodes. Every node's first member (its leader) talks to the
// other nodes.
//
// all_reduce keeps the rank-order fold of the one-node algorithms, so results
// are bitwise those of the shm backend for the same world. Small messages (and
// two nodes of one rank) go one-shot: the leaders exchange their nodes' raw
// inputs, and every rank folds all of them into its own output, one network
// hop. Larger ones relay: the ranks are cut into runs of consecutive ranks on
// one node (one run per node when nodes hold consecutive ranks), and the fold
// travels along the runs like a relay — the leader of run i's node continues
// the accumulator it received from run i-1 over run i's inputs (read in place from shared memory) and passes it on, in
// the accumulator type (f32 for bf16/f16), chunk by chunk so that the nodes
// work in a pipeline. The last run's leader finishes (avg, rounding) and sends
// each finished chunk to every other leader; leaders hand the result to their
// node through shared memory. A leaders' tree reduction (what MPI_Allreduce
// does) would add in another order and round bf16 at every step.
//
//   node 0 (ranks 0,1)            node 1 (ranks 2,3)
//   acc = x0 + x1  ── chunk c ──▶ acc = (acc + x2) + x3 = result
//   result ◀────────── chunk c ── result
//
// reduce_scatter is the same relay, then each leader gets its ranks' chunks;
// tile_reduce runs on packed tiles through all_reduce. The data-movement
// collectives are in hier/data_movement.cc, the shared state and node
// phases in hier/hier_state.cc.
#include "symmflow/core/error.h"
#include "symmflow/runtime/collectives/hier/hier.h"
#include "symmflow/runtime/collectives/reduce_kernels.h"

namespace symmflow::dist::detail {

using namespace hier;

namespace {

// The relay (leaders only): folds in rank order across the runs; `res` gets
// the finished result — every element on the last run's node, and on the
// others too when `share` (sent chunk by chunk as it is finished).
void relay(HierState& h, CollState* st, DType dt, ReduceOp op, const char* mine, int64_t n,
           char* res, bool share, const char* what) {
  ProcessGroup& g = h.g;
  NetLink& net = h.net();
  const size_t isz = element_size(dt), asz = acc_itemsize(dt);
  const int last = int(h.runs.size()) - 1;
  const int final_node = h.runs[size_t(last)].node;
  std::vector<int> mine_runs;
  for (int i = 0; i <= last; ++i)
    if (h.runs[size_t(i)].node == g.node()) mine_runs.push_back(i);
  // Chunks are whole cache lines of the data.
  const int64_t line = int64_t(64 / isz);
  int64_t C = std::max<int64_t>(line, int64_t(net_chunk_bytes() / asz) / line * line);
  const int64_t nchunks = (n + C - 1) / C;
  // Per run of mine: the accumulator received (runs after the first) and the
  // one passed on (runs before the last), n elements each.
  const size_t abytes = size_t(n) * asz;
  char* pool = static_cast<char*>(h.acc.get(2 * mine_runs.size() * abytes));
  auto acc_in = [&](size_t k) { return pool + (2 * k) * abytes; };
  auto acc_out = [&](size_t k) { return pool + (2 * k + 1) * abytes; };
  std::vector<std::vector<NetLink::Request>> recvs(mine_runs.size());
  for (size_t k = 0; k < mine_runs.size(); ++k) {
    const int i = mine_runs[k];
    if (i == 0) continue;
    const int from = h.leader(h.runs[size_t(i - 1)].node);
    for (int64_t c = 0; c < nchunks; ++c) {
      const int64_t len = std::min(C, n - c * C);
      recvs[k].push_back(net.irecv(acc_in(k) + size_t(c * C) * asz, size_t(len) * asz, from,
                                   kTagChain + i, NetLink::Lane::coll));
    }
  }
  std::vector<NetLink::Request> pending;
  std::vector<const void*> srcs;
  for (int64_t c = 0; c < nchunks; ++c) {
    const int64_t at = c * C, len = std::min(C, n - at);
    for (size_t k = 0; k < mine_runs.size(); ++k) {
      const int i = mine_runs[k];
      const Run& run = h.runs[size_t(i)];
      if (i > 0) net_wait(net, recvs[k][size_t(c)], site_of(g, what, h.leader(h.runs[size_t(i - 1)].node)), h.live());
      srcs.clear();
      for (int p = run.first; p < run.first + run.count; ++p)
        srcs.push_back(input_of(h, st, p, mine) + size_t(at) * isz);
      const void* ain = i > 0 ? acc_in(k) + size_t(at) * asz : nullptr;
      if (i == last) {
        char* dst = res + size_t(at) * isz;
        fold_link(dt, op, ain, run.count, srcs.data(), nullptr, dst, g.size(), size_t(len));
        if (share)
          for (int node = 0; node < g.num_nodes(); ++node)
            if (node != g.node())
              pending.push_back(net.isend(dst, size_t(len) * isz, h.leader(node), kTagResult,
                                          NetLink::Lane::coll));
      } else {
        char* a = acc_out(k) + size_t(at) * asz;
        fold_link(dt, op, ain, run.count, srcs.data(), a, nullptr, g.size(), size_t(len));
        pending.push_back(net.isend(a, size_t(len) * asz, h.leader(h.runs[size_t(i + 1)].node),
                                    kTagChain + i + 1, NetLink::Lane::coll));
      }
    }
    // Posted only now: the finished chunk c cannot exist before my part of it
    // left, and my inputs in `res` (in place) have been read by then.
    if (share && g.node() != final_node)
      pending.push_back(net.irecv(res + size_t(at) * isz, size_t(len) * isz, h.leader(final_node),
                                  kTagResult, NetLink::Lane::coll));
  }
  net_wait_all(net, pending, site_of(g, what, -1), h.live());
}

// One-shot between nodes: each leader sends its node's inputs (straight from
// shared memory, one message per rank) to every other leader, which receives
// them into its workspace; then every rank of the node folds all W inputs in
// rank order with the one-node kernel, into its own output. One network hop,
// no result to hand around, and the bits of a one-node one-shot.
void one_shot_all_reduce(HierState& h, const Tensor& in, const Tensor& out, ReduceOp op,
                         CollectiveResult& r, const char* what) {
  ProcessGroup& g = h.g;
  NetLink& net = h.net();
  const int W = g.size();
  const size_t bytes = in.nbytes();
  // The other nodes' inputs, in rank order, in the leader's receive buffer.
  std::vector<int64_t> slot(size_t(W), -1);
  size_t nremote = 0;
  for (int p = 0; p < W; ++p)
    if (g.node_of(p) != g.node()) slot[size_t(p)] = int64_t(nremote++);
  CollState* st = node_begin(h, Kind::all_reduce, in, out, int(op), nremote * bytes, false, r, what,
                             /*leader_input_shared=*/true);
  const bool leader = h.am_leader();
  const char* mine = own_input(h, in, r);
  char* remote = st ? const_cast<char*>(st->peer_red(0))
                    : static_cast<char*>(h.acc.get(nremote * bytes));
  std::vector<NetLink::Request> recvs, sends;
  if (leader) {
    for (int node = 0; node < g.num_nodes(); ++node) {
      if (node == g.node()) continue;
      for (int p : g.node_ranks(node))
        recvs.push_back(net.irecv(remote + size_t(slot[size_t(p)]) * bytes, bytes, h.leader(node),
                                  kTagOneShot, NetLink::Lane::coll));
      for (int p : g.node_ranks(g.node()))
        sends.push_back(net.isend(input_of(h, st, p, mine), bytes, h.leader(node), kTagOneShot,
                                  NetLink::Lane::coll));
    }
    net_wait_all(net, recvs, site_of(g, what, -1), h.live());
    if (st) st->signal_all(kChPhase);
  } else {
    st->run(st->wait_from(0, kChPhase, what));
  }
  std::vector<const void*> ptrs(static_cast<size_t>(W));
  for (int p = 0; p < W; ++p)
    ptrs[size_t(p)] = slot[size_t(p)] >= 0 ? remote + size_t(slot[size_t(p)]) * bytes
                                           : input_of(h, st, p, mine);
  // In place, my input is still read by my node's peers: reduce aside and copy
  // back after the exit sync. Alone on my node, only the network reads it: let
  // the sends finish (MPI owns a send buffer until then), then fold over it.
  const bool inplace = in.data_ptr() == out.data_ptr();
  const bool aside = !out.is_contiguous() || (inplace && st);
  if (inplace && !st) net_wait_all(net, sends, site_of(g, what, -1), h.live());
  char* dst = aside ? static_cast<char*>(h.result.get(bytes)) : static_cast<char*>(out.data_ptr());
  reduce_kernel(in.dtype(), op, W, ptrs.data(), dst, size_t(in.numel()));
  if (leader) net_wait_all(net, sends, site_of(g, what, -1), h.live());
  if (st) st->run(st->pull_end(what));
  if (aside) {
    unpack(dst, out);
    if (!out.is_contiguous()) count_staged(r, bytes);
  }
}

// One-shot between nodes when what a leader sends is small, or when it is
// no more than the relay moves per link (two nodes of one rank each).
bool use_one_shot(const ProcessGroup& g, size_t bytes) {
  size_t max_local = 0;
  for (int node = 0; node < g.num_nodes(); ++node)
    max_local = std::max(max_local, g.node_ranks(node).size());
  const size_t fan = max_local * size_t(g.num_nodes() - 1);
  return fan * bytes <= net_one_shot_max_bytes() || fan == 1;
}

}  // namespace

CollectiveResult hier_all_reduce(ProcessGroup& g, const Tensor& in, const Tensor& out, ReduceOp op) {
  const char* what = "all_reduce (hierarchical)";
  CollectiveResult r;
  r.algo = AllReduceAlgo::hierarchical;
  if (in.numel() == 0) return r;
  HierState& h = hier_state(g);
  h.begin_call(Kind::all_reduce, in.dtype(), int(op), -1, in.numel(), what);
  const size_t bytes = in.nbytes();
  if (use_one_shot(g, bytes)) {
    one_shot_all_reduce(h, in, out, op, r, what);
    return r;
  }
  const bool leader = h.am_leader();
  CollState* st = node_begin(h, Kind::all_reduce, in, out, int(op), bytes, true, r, what);
  if (leader) {
    char* res = result_buffer(h, st, out, bytes);
    const char* mine = own_input(h, in, r);
    relay(h, st, in.dtype(), op, mine, in.numel(), res, true, what);
    result_to_out(res, out, r);
  }
  node_end(st, leader, [&](const char* res) { copy_into(res, out, r); }, what);
  return r;
}

CollectiveResult hier_reduce_scatter(ProcessGroup& g, const Tensor& in, const Tensor& out, ReduceOp op) {
  const char* what = "reduce_scatter (hierarchical)";
  CollectiveResult r;
  if (in.numel() == 0) return r;
  HierState& h = hier_state(g);
  h.begin_call(Kind::reduce_scatter, in.dtype(), int(op), -1, in.numel(), what);
  const bool leader = h.am_leader();
  const size_t cbytes = out.nbytes();
  CollState* st = node_begin(h, Kind::reduce_scatter, in, out, int(op), in.nbytes(), false, r, what);
  if (leader) {
    char* res = result_buffer(h, st, Tensor(), in.nbytes());
    const char* mine = own_input(h, in, r);
    relay(h, st, in.dtype(), op, mine, in.numel(), res, false, what);
    // The last run's leader sends every other node its members' chunks.
    NetLink& net = h.net();
    const int final_node = h.runs.back().node;
    std::vector<NetLink::Request> pending;
    if (g.node() == final_node) {
      for (int node = 0; node < g.num_nodes(); ++node)
        if (node != g.node())
          for (int p : g.node_ranks(node))
            pending.push_back(net.isend(res + size_t(p) * cbytes, cbytes, h.leader(node),
                                        kTagScatter, NetLink::Lane::coll));
    } else {
      for (int p : g.node_ranks(g.node()))
        pending.push_back(net.irecv(res + size_t(p) * cbytes, cbytes, h.leader(final_node),
                                    kTagScatter, NetLink::Lane::coll));
    }
    net_wait_all(net, pending, site_of(g, what, -1), h.live());
    copy_into(res + size_t(g.rank()) * cbytes, out, r);
  }
  node_end(st, leader, [&](const char* res) { copy_into(res + size_t(g.rank()) * cbytes, out, r); },
           what);
  return r;
}

CollectiveResult hier_tile_reduce(ProcessGroup& g, const Tensor& in_tile, const Tensor& out_tile,
                                  int root, ReduceOp op) {
  // Rare between nodes: the tiles (packed when strided) are all-reduced; the
  // root keeps the result. Same fold, same bits.
  CollectiveResult r;
  Tensor a = in_tile;
  if (!in_tile.is_contiguous()) {
    a = Tensor::empty_with(regular_allocator(), {in_tile.numel()}, in_tile.dtype());
    pack(in_tile, a.data_ptr());
    count_staged(r, in_tile.nbytes());
  }
  Tensor b = Tensor::empty_with(regular_allocator(), {in_tile.numel()}, in_tile.dtype());
  absorb(r, hier_all_reduce(g, a, b, op));
  if (g.rank() == root) {
    unpack(b.data_ptr(), out_tile);
    count_staged(r, out_tile.nbytes());
  }
  return r;
}

}  // namespace symmflow::dist::detail
