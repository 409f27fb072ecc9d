// The hierarchical collectives' per-group state and node phases
// (hier.h).
#include <cstdlib>

#include "symmflow/core/error.h"
#include "symmflow/core/params.h"
#include "symmflow/runtime/collectives/hier/hier.h"
#include "symmflow/runtime/world.h"

namespace symmflow::dist::detail::hier {

// Bytes a leader may send in total for a one-shot exchange between nodes
// (each leader sends its node's raw inputs to every other leader, and every
// rank folds all W inputs itself: one network hop instead of the relay's
// two). SYMMFLOW_NET_ONE_SHOT_MAX_BYTES overrides.
size_t net_one_shot_max_bytes() {
  static const size_t v = params::bytes("SYMMFLOW_NET_ONE_SHOT_MAX_BYTES");
  return v;
}

// Pipeline chunk of the relay. SYMMFLOW_NET_CHUNK_BYTES overrides.
size_t net_chunk_bytes() {
  static const size_t v = params::bytes("SYMMFLOW_NET_CHUNK_BYTES");
  return v;
}

HierState::HierState(ProcessGroup& group) : g(group) {
  for (int p = 0; p < g.size(); ++p) {
    if (!runs.empty() && runs.back().node == g.node_of(p)) ++runs.back().count;
    else runs.push_back({g.node_of(p), p, 1});
  }
  const int N = g.num_nodes(), k = g.node();
  neighbours = {leader((k + N - 1) % N)};
  if (N > 2) neighbours.push_back(leader((k + 1) % N));
  hdr = std::shared_ptr<Headers>(new Headers());
}
HierState::~HierState() {
  // A receive still posted may complete into the buffers: leave them to the
  // process rather than to a use after free.
  if (!hdr->recv_req.empty()) new std::shared_ptr<Headers>(hdr);
}

void HierState::exchange_headers() {
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

HierState& hier_state(ProcessGroup& g) { return detail::GroupAccess::extension<HierState>(g); }

runtime::WaitSite site_of(const ProcessGroup& g, const char* op, int peer) {
  return runtime::WaitSite{op, "between nodes", g.name(), g.rank(), peer};
}

CollState* node_begin(HierState& h, Kind kind, const Tensor& in, const Tensor& out, int op,
                      size_t res_bytes, bool result_in_out, CollectiveResult& r, const char* what,
                      bool leader_input_shared) {
  ProcessGroup& node_group = h.g.node_group();
  if (node_group.size() == 1) return nullptr;
  CollState& st = coll_state(node_group);
  Desc d = st.begin(kind, Proto::pull, in.dtype(), op, -1, in.numel(), /*aux: hierarchical*/ 1);
  const bool leader = node_group.rank() == 0;
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
  st.run(st.pull_begin(d, nullptr, 0, [&] {
    pack(in, st.ws_local() + src_ws);
    count_staged(r, in.nbytes());
  }, what));
  return &st;
}

char* result_buffer(HierState& h, CollState* st, const Tensor& out, size_t res_bytes) {
  if (st) return const_cast<char*>(st->peer_red(0));
  if (out.defined() && out.is_contiguous() && out.nbytes() == res_bytes)
    return static_cast<char*>(out.data_ptr());
  return static_cast<char*>(h.result.get(std::max<size_t>(res_bytes, 1)));
}

const char* own_input(HierState& h, const Tensor& in, CollectiveResult& r) {
  if (in.is_contiguous()) return static_cast<const char*>(in.data_ptr());
  void* p = h.packed.get(in.nbytes());
  pack(in, p);
  count_staged(r, in.nbytes());
  return static_cast<const char*>(p);
}

const char* input_of(HierState& h, CollState* st, int p, const char* mine) {
  if (p == h.g.rank()) return mine;
  return st->peer_src(h.g.local_index(p));
}

void copy_into(const char* src, const Tensor& out, CollectiveResult& r) {
  if (out.is_contiguous()) {
    copy_out(out.data_ptr(), src, out.nbytes());
  } else {
    unpack(src, out);
    count_staged(r, out.nbytes());
  }
}

void result_to_out(const char* res, const Tensor& out, CollectiveResult& r) {
  if (out.is_contiguous() && res == out.data_ptr()) return;
  unpack(res, out);
  count_staged(r, out.nbytes());
}

}  // namespace symmflow::dist::detail::hier
