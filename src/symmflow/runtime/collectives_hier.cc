// Collectives of groups that span nodes (mpi backend): shared memory inside
// each node (the node group's pull protocol, collectives_impl.h), the group's
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
// all_gather gathers each node's pieces at its leader and exchanges them
// between leaders; broadcast_ goes from the source to the other leaders, then
// through each node; all_to_all_single sends the rows for other nodes
// directly between the two ranks and the rest through the node's all_to_all;
// tile_reduce runs on packed tiles through all_reduce.
#include <cstdlib>

#include "symmflow/core/error.h"
#include "symmflow/runtime/collectives_impl.h"
#include "symmflow/runtime/reduce_kernels.h"
#include "symmflow/runtime/world.h"

namespace symmflow::dist::detail {

namespace {

// Tags on the collectives' lane. Between two leaders, messages of one tag
// match in the order they were sent, which every algorithm below relies on.
constexpr int kTagResult = 2;
constexpr int kTagGather = 3;
constexpr int kTagScatter = 4;
constexpr int kTagBcast = 5;
constexpr int kTagA2A = 6;
constexpr int kTagOneShot = 7;
constexpr int kTagHeader = 8;
constexpr int kTagChain = 100;  // + run index: the accumulator entering that run

// Bytes a leader may send in total for a one-shot exchange between nodes
// (each leader sends its node's raw inputs to every other leader, and every
// rank folds all W inputs itself: one network hop instead of the relay's
// two). SYMMFLOW_NET_ONE_SHOT_MAX_BYTES overrides.
size_t net_one_shot_max_bytes() {
  static const size_t v = [] {
    const char* s = std::getenv("SYMMFLOW_NET_ONE_SHOT_MAX_BYTES");
    return s && *s ? parse_bytes(s, "SYMMFLOW_NET_ONE_SHOT_MAX_BYTES") : size_t(256) << 10;
  }();
  return v;
}

// Pipeline chunk of the relay. SYMMFLOW_NET_CHUNK_BYTES overrides.
size_t net_chunk_bytes() {
  static const size_t v = [] {
    const char* s = std::getenv("SYMMFLOW_NET_CHUNK_BYTES");
    return s && *s ? parse_bytes(s, "SYMMFLOW_NET_CHUNK_BYTES") : size_t(512) << 10;
  }();
  return v;
}

struct Run {
  int node, first, count;  // group ranks [first, first + count), all on `node`
};

// What a leader tells the neighbouring nodes' leaders about the collective it
// is stuck in, so that nodes calling different collectives fail with both
// calls named instead of waiting for messages that never match.
struct CallHeader {
  uint64_t call_no = 0;
  Kind kind{};
  uint32_t dtype = 0;
  int32_t op = -1, root = -1;
  int64_t numel = 0;
};

// Per-group state of the hierarchical collectives. It is also the liveness
// check of their network waits (run every 50 ms while a wait lasts): the
// group's own check, then the call-header exchange. Nothing is exchanged on
// the fast path: a leader whose wait lasts tells its neighbour leaders which
// call it is in, and compares what they tell it for the same call number. Two
// nodes in different collectives both get stuck, so both speak, and both fail.
struct HierState : runtime::LivenessCheck {
  explicit HierState(ProcessGroup& group) : g(group) {
    for (int p = 0; p < g.size(); ++p) {
      if (!runs.empty() && runs.back().node == g.node_of(p)) ++runs.back().count;
      else runs.push_back({g.node_of(p), p, 1});
    }
    const int N = g.num_nodes(), k = g.node();
    neighbours = {leader((k + N - 1) % N)};
    if (N > 2) neighbours.push_back(leader((k + 1) % N));
    hdr = std::shared_ptr<Headers>(new Headers());
  }
  ~HierState() override {
    // A receive still posted may complete into the buffers: leave them to the
    // process rather than to a use after free.
    if (!hdr->recv_req.empty()) new std::shared_ptr<Headers>(hdr);
  }
  ProcessGroup& g;
  std::vector<Run> runs;
  Scratch acc, result, packed;

  int leader(int node) const { return g.node_ranks(node)[0]; }
  bool am_leader() const { return leader(g.node()) == g.rank(); }
  NetLink& net() const { return *g.net(); }
  runtime::LivenessCheck* live() { return this; }

  // Every rank, at the start of every collective: what it is calling.
  void begin_call(Kind kind, DType dt, int op, int root, int64_t numel, const char* what) {
    current = CallHeader{++calls, kind, uint32_t(dt), op, root, numel};
    told = false;
    what_ = what;
  }

  void check(const runtime::WaitSite& site) override {
    g.liveness()->check(site);
    if (am_leader()) exchange_headers();
  }

 private:
  struct Headers {
    CallHeader out;
    std::vector<CallHeader> in;
    std::vector<NetLink::Request> recv_req, send_req;
  };

  void exchange_headers() {
    NetLink& n = net();
    Headers& H = *hdr;
    if (H.recv_req.empty()) {  // first time: one receive per neighbour, reposted after each
      H.in.resize(neighbours.size());
      for (size_t i = 0; i < neighbours.size(); ++i)
        H.recv_req.push_back(n.irecv(&H.in[i], sizeof(CallHeader), neighbours[i], kTagHeader,
                                     NetLink::Lane::coll));
    }
    if (!told) {
      bool free = true;
      for (auto r : H.send_req) free = free && n.test(r);  // receives are always posted
      if (free) {
        H.send_req.clear();
        H.out = current;
        for (int nb : neighbours)
          H.send_req.push_back(n.isend(&H.out, sizeof(CallHeader), nb, kTagHeader,
                                       NetLink::Lane::coll));
        told = true;
      }
    }
    for (size_t i = 0; i < neighbours.size(); ++i) {
      if (!n.test(H.recv_req[i])) continue;
      const CallHeader got = H.in[i];
      H.recv_req[i] = n.irecv(&H.in[i], sizeof(CallHeader), neighbours[i], kTagHeader,
                              NetLink::Lane::coll);
      if (got.call_no != current.call_no) continue;  // an older or newer stall of theirs
      if (got.kind == current.kind && got.dtype == current.dtype && got.op == current.op &&
          got.root == current.root && got.numel == current.numel)
        continue;
      auto as_desc = [](const CallHeader& c) {
        Desc d;
        d.call_no = c.call_no;
        d.kind = c.kind;
        d.proto = Proto::pull;
        d.dtype = c.dtype;
        d.op = c.op;
        d.root = c.root;
        d.numel = c.numel;
        return d;
      };
      fail("{}: ranks disagree at collective call #{} of group '{}' (between nodes): rank {} calls "
           "{} but rank {} (node {}) calls {}. Every rank must call the same collectives in the "
           "same order with tensors of the same dtype and size.",
           what_, current.call_no, g.name(), g.rank(), describe(as_desc(current)), neighbours[i],
           g.node_of(neighbours[i]), describe(as_desc(got)));
    }
  }

  std::vector<int> neighbours;  // leaders of the previous (and next) node
  std::shared_ptr<Headers> hdr;
  uint64_t calls = 0;
  CallHeader current;
  bool told = false;
  const char* what_ = "";
};

HierState& hier(ProcessGroup& g) { return g.extension<HierState>(); }

runtime::WaitSite site_of(const ProcessGroup& g, const char* op, int peer) {
  return runtime::WaitSite{op, "between nodes", g.name(), g.rank(), peer};
}

// The node phase shared by the reductions and all_gather: members other than
// the leader make `in` readable (in place or staged), the leader announces
// where the result will be (its `out` when peer-readable, else `res_bytes` of
// workspace). Returns the node's CollState, or nullptr for a one-rank node.
CollState* node_begin(HierState& h, Kind kind, const Tensor& in, const Tensor& out, int op,
                      size_t res_bytes, bool result_in_out, CollectiveResult& r, const char* what,
                      bool leader_input_shared = false) {
  ProcessGroup& nd = h.g.node_group();
  if (nd.size() == 1) return nullptr;
  CollState& st = state(nd);
  Desc d = st.begin(kind, Proto::pull, in.dtype(), op, -1, in.numel(), /*aux: hierarchical*/ 1);
  const bool leader = nd.rank() == 0;
  size_t src_ws = 0;  // where a staged input goes in my workspace
  if (leader) {
    const int64_t off = result_in_out ? st.heap_offset(out) : -1;
    if (off >= 0) {
      d.red_off = uint64_t(off);
    } else {
      d.flags |= kRedInWs;
      d.ws_need = res_bytes;
      src_ws = (res_bytes + 63) / 64 * 64;
    }
  }
  if (!leader || leader_input_shared) {
    const int64_t off = st.heap_offset(in);
    if (off >= 0) {
      d.src_off = uint64_t(off);
    } else {
      d.flags |= kSrcInWs;
      d.src_off = src_ws;
      d.ws_need = src_ws + in.nbytes();
    }
  }
  st.pull_begin(d, nullptr, 0, [&] {
    pack(in, st.ws_local() + src_ws);
    count_staged(r, in.nbytes());
  }, what);
  return &st;
}

// The leader's buffer for the whole result: what node_begin announced, or
// (one-rank node) `out` itself when it is given, contiguous and `res_bytes`
// long, else scratch.
char* result_buffer(HierState& h, CollState* st, const Tensor& out, size_t res_bytes) {
  if (st) return const_cast<char*>(st->peer_red(0));
  if (out.defined() && out.is_contiguous() && out.nbytes() == res_bytes)
    return static_cast<char*>(out.data_ptr());
  return static_cast<char*>(h.result.get(std::max<size_t>(res_bytes, 1)));
}

// The leader's own input as contiguous bytes.
const char* own_input(HierState& h, const Tensor& in, CollectiveResult& r) {
  if (in.is_contiguous()) return static_cast<const char*>(in.data_ptr());
  void* p = h.packed.get(in.nbytes());
  pack(in, p);
  count_staged(r, in.nbytes());
  return static_cast<const char*>(p);
}

// Address of group rank p's input (p on my node), for the leader.
const char* input_of(HierState& h, CollState* st, int p, const char* mine) {
  if (p == h.g.rank()) return mine;
  return st->peer_src(h.g.local_index(p));
}

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
    st->wait_from(0, kChPhase, what);
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
  if (st) st->pull_end(what);
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

// The node phase's end: the leader says its result is ready (kChPhase), every
// other member copies `bytes` at `offset` of it with `take`, then the exit sync.
template <class F>
void node_end(CollState* st, bool leader, F&& take, const char* what) {
  if (!st) return;
  if (leader) {
    st->signal_all(kChPhase);
  } else {
    st->wait_from(0, kChPhase, what);
    take(st->peer_red(0));
  }
  st->pull_end(what);
}

void copy_into(const char* src, const Tensor& out, CollectiveResult& r) {
  if (out.is_contiguous()) {
    copy_out(out.data_ptr(), src, out.nbytes());
  } else {
    unpack(src, out);
    count_staged(r, out.nbytes());
  }
}

}  // namespace

CollectiveResult hier_all_reduce(ProcessGroup& g, const Tensor& in, const Tensor& out, ReduceOp op) {
  const char* what = "all_reduce (hierarchical)";
  CollectiveResult r;
  r.algo = AllReduceAlgo::hierarchical;
  if (in.numel() == 0) return r;
  HierState& h = hier(g);
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
    if (res != out.data_ptr() || !out.is_contiguous()) {
      unpack(res, out);
      count_staged(r, bytes);
    }
  }
  node_end(st, leader, [&](const char* res) { copy_into(res, out, r); }, what);
  return r;
}

CollectiveResult hier_reduce_scatter(ProcessGroup& g, const Tensor& in, const Tensor& out, ReduceOp op) {
  const char* what = "reduce_scatter (hierarchical)";
  CollectiveResult r;
  if (in.numel() == 0) return r;
  HierState& h = hier(g);
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

CollectiveResult hier_all_gather(ProcessGroup& g, const Tensor& in, const Tensor& out) {
  const char* what = "all_gather (hierarchical)";
  CollectiveResult r;
  if (in.numel() == 0) return r;
  HierState& h = hier(g);
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
    if (res != out.data_ptr() || !out.is_contiguous()) {
      unpack(res, out);
      count_staged(r, total);
    }
  }
  node_end(st, leader, [&](const char* res) { copy_into(res, out, r); }, what);
  return r;
}

CollectiveResult hier_broadcast(ProcessGroup& g, const Tensor& t, int src) {
  const char* what = "broadcast_ (hierarchical)";
  CollectiveResult r;
  if (t.numel() == 0) return r;
  HierState& h = hier(g);
  h.begin_call(Kind::broadcast, t.dtype(), -1, src, t.numel(), what);
  NetLink& net = h.net();
  ProcessGroup& nd = g.node_group();
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
    if (nd.size() > 1) {
      CollectiveResult n = broadcast_(nd, t, g.local_index(src));
      r.staged |= n.staged;
      r.staged_bytes += n.staged_bytes;
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
    if (nd.size() > 1) {
      CollectiveResult n = broadcast_(nd, t, 0);
      r.staged |= n.staged;
      r.staged_bytes += n.staged_bytes;
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
  HierState& h = hier(g);
  NetLink& net = h.net();
  ProcessGroup& nd = g.node_group();
  const int W = g.size();
  int64_t row = 1;
  for (int64_t d = 1; d < in.dim(); ++d) row *= in.size(d);
  h.begin_call(Kind::all_to_all, in.dtype(), -1, -1, row, what);
  const size_t row_bytes = size_t(row) * in.itemsize();
  // Contiguous stand-ins for strided tensors (counted).
  auto regular = [&](const Tensor& t) { return Tensor::empty_with(regular_allocator(), t.sizes(), t.dtype()); };
  Tensor inC = in, outC = out;
  if (!in.is_contiguous()) {
    inC = regular(in);
    pack(in, inC.data_ptr());
    count_staged(r, in.nbytes());
  }
  if (!out.is_contiguous()) outC = regular(out);
  std::vector<int64_t> in_at(size_t(W) + 1, 0), out_at(size_t(W) + 1, 0);
  for (int p = 0; p < W; ++p) {
    in_at[size_t(p) + 1] = in_at[size_t(p)] + in_splits[size_t(p)];
    out_at[size_t(p) + 1] = out_at[size_t(p)] + out_splits[size_t(p)];
  }
  char* ib = static_cast<char*>(inC.data_ptr());
  char* ob = static_cast<char*>(outC.data_ptr());
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
  std::vector<int64_t> lin, lout;
  for (int p : mine) {
    lin.push_back(in_splits[size_t(p)]);
    lout.push_back(out_splits[size_t(p)]);
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
  Tensor lin_t, lout_t;
  if (consecutive) {
    lin_t = rows_view(inC, in_at[size_t(mine.front())], total(lin));
    lout_t = rows_view(outC, out_at[size_t(mine.front())], total(lout));
  } else {
    Shape si = inC.sizes(), so = outC.sizes();
    si[0] = total(lin);
    so[0] = total(lout);
    lin_t = Tensor::empty_with(regular_allocator(), si, in.dtype());
    lout_t = Tensor::empty_with(regular_allocator(), so, in.dtype());
    int64_t at = 0;
    for (int p : mine) {
      copy_bytes(static_cast<char*>(lin_t.data_ptr()) + size_t(at) * row_bytes,
                 ib + size_t(in_at[size_t(p)]) * row_bytes, size_t(in_splits[size_t(p)]) * row_bytes);
      at += in_splits[size_t(p)];
    }
    count_staged(r, lin_t.nbytes());
  }
  if (nd.size() > 1) {
    CollectiveResult n = all_to_all_single(nd, lin_t, lout_t, lout, lin);
    r.staged |= n.staged;
    r.staged_bytes += n.staged_bytes;
  } else if (lout_t.nbytes()) {
    copy_bytes(lout_t.data_ptr(), lin_t.data_ptr(), lout_t.nbytes());
  }
  if (!consecutive) {
    int64_t at = 0;
    for (int p : mine) {
      copy_bytes(ob + size_t(out_at[size_t(p)]) * row_bytes,
                 static_cast<char*>(lout_t.data_ptr()) + size_t(at) * row_bytes,
                 size_t(out_splits[size_t(p)]) * row_bytes);
      at += out_splits[size_t(p)];
    }
    count_staged(r, lout_t.nbytes());
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
    unpack(outC.data_ptr(), out);
    count_staged(r, out.nbytes());
  }
  return r;
}

CollectiveResult hier_tile_reduce(ProcessGroup& g, const Tensor& in_tile, const Tensor& out_tile,
                                  int root, ReduceOp op) {
  // Rare between nodes: the tiles are packed and all-reduced; the root keeps
  // the result. Same fold, same bits.
  CollectiveResult r;
  Tensor a = Tensor::empty_with(regular_allocator(), {in_tile.numel()}, in_tile.dtype());
  Tensor b = Tensor::empty_with(regular_allocator(), {in_tile.numel()}, in_tile.dtype());
  pack(in_tile, a.data_ptr());
  count_staged(r, in_tile.nbytes());
  CollectiveResult n = hier_all_reduce(g, a, b, op);
  r.staged_bytes += n.staged_bytes;
  if (g.rank() == root) {
    unpack(b.data_ptr(), out_tile);
    count_staged(r, out_tile.nbytes());
  }
  return r;
}

}  // namespace symmflow::dist::detail
