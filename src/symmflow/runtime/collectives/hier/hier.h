// Internals shared by the collectives of groups that span nodes
// (collectives/hier/*.cc): message tags, the per-group state (runs of ranks,
// scratch, the call-header check) and the node phases.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "symmflow/runtime/collectives/coll_state.h"
#include "symmflow/runtime/net/net_link.h"

namespace symmflow::dist::detail::hier {

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

size_t net_one_shot_max_bytes();  // SYMMFLOW_NET_ONE_SHOT_MAX_BYTES, default 256K
size_t net_chunk_bytes();         // SYMMFLOW_NET_CHUNK_BYTES, default 512K

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
  explicit HierState(ProcessGroup& group);
  ~HierState() override;
  ProcessGroup& g;
  std::vector<Run> runs;
  Scratch acc, result, packed;

  int leader(int node) const { return g.node_ranks(node)[0]; }
  bool am_leader() const { return leader(g.node()) == g.rank(); }
  NetLink& net() const { return *detail::GroupAccess::net(g); }
  runtime::LivenessCheck* live() { return this; }

  // Every rank, at the start of every collective: what it is calling.
  void begin_call(Kind kind, DType dt, int op, int root, int64_t numel, const char* what) {
    current = CallHeader{++calls, kind, uint32_t(dt), op, root, numel};
    told = false;
    what_ = what;
  }

  void check(const runtime::WaitSite& site) override {
    detail::GroupAccess::liveness(g)->check(site);
    if (am_leader()) exchange_headers();
  }

 private:
  struct Headers {
    CallHeader out;
    std::vector<CallHeader> in;
    std::vector<NetLink::Request> recv_req, send_req;
  };

  void exchange_headers();

  std::vector<int> neighbours;  // leaders of the previous (and next) node
  std::shared_ptr<Headers> hdr;
  uint64_t calls = 0;
  CallHeader current;
  bool told = false;
  const char* what_ = "";
};

HierState& hier_state(ProcessGroup& g);
runtime::WaitSite site_of(const ProcessGroup& g, const char* op, int peer);

// The node phase shared by the reductions and all_gather: members other than
// the leader make `in` readable (in place or staged), the leader announces
// where the result will be (its `out` when peer-readable, else `res_bytes` of
// workspace; with `leader_input_shared`, its input is announced too). Returns
// the node's CollState, or nullptr for a one-rank node.
CollState* node_begin(HierState& h, Kind kind, const Tensor& in, const Tensor& out, int op,
                      size_t res_bytes, bool result_in_out, CollectiveResult& r, const char* what,
                      bool leader_input_shared = false);
// The leader's buffer for the whole result: what node_begin announced, or
// (one-rank node) `out` itself when it is given, contiguous and `res_bytes`
// long, else scratch.
char* result_buffer(HierState& h, CollState* st, const Tensor& out, size_t res_bytes);
// This rank's own input as contiguous bytes (packed aside when strided, counted).
const char* own_input(HierState& h, const Tensor& in, CollectiveResult& r);
// Address of group rank p's input (p on my node).
const char* input_of(HierState& h, CollState* st, int p, const char* mine);
// `src` into `out` (unpacked, and counted, when `out` is strided).
void copy_into(const char* src, const Tensor& out, CollectiveResult& r);
// The leader's whole result `res` into its `out`, unless `res` is `out`'s own
// bytes (counted: the copy exists because `out` is not peer-readable).
void result_to_out(const char* res, const Tensor& out, CollectiveResult& r);

// The node phase's end: the leader says its result is ready (kChPhase), every
// other member copies `bytes` at `offset` of it with `take`, then the exit sync.
template <class F>
void node_end(CollState* st, bool leader, F&& take, const char* what) {
  if (!st) return;
  if (leader) {
    st->signal_all(kChPhase);
  } else {
    st->run(st->wait_from(0, kChPhase, what));
    take(st->peer_red(0));
  }
  st->run(st->pull_end(what));
}

}  // namespace symmflow::dist::detail::hier
