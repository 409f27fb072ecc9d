// The public P2P functions (p2p.h: isend, irecv, batch_isend_irecv), the
// WorkImpl of a P2P operation (test / block), and the P2P side of the progress
// rule (progress.h: p2p_progress, p2p_pending, p2p_activity). The engine is a
// per-group extension, created on first use and cached per thread.
#include "symmflow/core/error.h"
#include "symmflow/runtime/p2p/engine.h"
#include "symmflow/runtime/progress.h"
#include "symmflow/runtime/sim_link.h"

namespace symmflow::dist {

namespace {

// ProcessGroup::extension() hashes a type_index per call: remember the last
// group's engine. A destroyed engine bumps the generation, so a new group at a
// recycled address never hits a stale entry (as coll_state() does).
struct EngineCache {
  ProcessGroup* g = nullptr;
  P2PEngine* e = nullptr;
  uint64_t gen = 0;
};
thread_local EngineCache t_engine;

P2PEngine& engine_of(ProcessGroup& g) {
  EngineCache& c = t_engine;
  const uint64_t gen = P2PEngine::generation.load(std::memory_order_relaxed);
  if (c.g == &g && c.gen == gen) return *c.e;
  P2PEngine& e = detail::GroupAccess::extension<P2PEngine>(g);
  c = {&g, &e, gen};
  return e;
}

// The Work's engine, if its group still exists. Fast path: no engine was
// destroyed since the Work was made.
P2PEngine& engine_of(const P2PWork& w) {
  if (P2PEngine::generation.load(std::memory_order_relaxed) != w.engine_generation)
    SF_CHECK(P2PEngine::alive(w.engine, w.engine_id),
             "{} to/from rank {} (tag {}): its process group was destroyed before the operation "
             "completed", w.op(), w.peer, w.tag);
  return *w.engine;
}

}  // namespace

namespace detail {
void p2p_progress(ProcessGroup& g) { engine_of(g).progress(); }
size_t p2p_ops_in_flight = 0;
bool p2p_pending(ProcessGroup& g) { return p2p_ops_in_flight != 0 && engine_of(g).pending(); }
uint64_t p2p_activity(ProcessGroup& g) { return engine_of(g).activity(); }
std::string p2p_unmatched(ProcessGroup& g) { return engine_of(g).unmatched_sends(); }
void p2p_set_eager_max_bytes(ProcessGroup& g, size_t bytes) { engine_of(g).set_eager_max_bytes(bytes); }
}  // namespace detail

bool P2PWork::test() {
  if (!done) engine_of(*this).progress();
  return done;
}

void P2PWork::block() {
  if (!done) engine_of(*this).wait(*this);
}

// One progress pass per call: consume every incoming event first (a receive
// post already there lets the send go rendezvous; an eager message already
// there lets the receive complete without a post), then post, then flush and
// notify.
std::shared_ptr<P2PWork> P2PEngine::isend(const Tensor& t, int peer, int tag) {
  auto w = make_work(P2POp::Kind::send, t, peer, tag);
  pass();
  post_send(w);
  PeerState& ps = peers_[size_t(peer)];
  if (ps.out && !ps.staged_sends.empty()) drive_staged(peer);
  notify_peers();
  return w;
}

std::shared_ptr<P2PWork> P2PEngine::irecv(const Tensor& t, int peer, int tag) {
  auto w = make_work(P2POp::Kind::recv, t, peer, tag);
  pass();
  post_recv(w);
  notify_peers();
  return w;
}

std::vector<std::shared_ptr<P2PWork>> P2PEngine::batch(const std::vector<P2POp>& ops) {
  std::vector<std::shared_ptr<P2PWork>> works(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {  // validate everything before posting anything
    works[i] = make_work(ops[i].kind, ops[i].tensor, ops[i].peer, ops[i].tag);
    works[i]->rendezvous = ops[i].rendezvous;
  }
  pass();
  for (size_t i = 0; i < ops.size(); ++i)
    if (ops[i].kind == P2POp::Kind::recv) post_recv(works[i]);
  // The peers' posts that arrived meanwhile, before the sends look for them.
  for (int p : node_ranks_) consume(p);
  for (size_t i = 0; i < ops.size(); ++i)
    if (ops[i].kind == P2POp::Kind::send) post_send(works[i]);
  for (int p : node_ranks_)
    if (!peers_[size_t(p)].staged_sends.empty()) drive_staged(p);
  notify_peers();
  return works;
}

// Each op is held back by the simulated link (sim_link.h), timed from here; a
// self-send/receive has no link.
Work isend(ProcessGroup& g, const Tensor& t, int dst, int tag) {
  const detail::LinkDelay link(dst != g.rank(), t.nbytes());
  return Work(link.wrap(engine_of(g).isend(t, dst, tag)));
}

Work irecv(ProcessGroup& g, const Tensor& t, int src, int tag) {
  const detail::LinkDelay link(src != g.rank(), t.nbytes(), detail::LinkDirection::in);
  return Work(link.wrap(engine_of(g).irecv(t, src, tag)));
}

std::vector<Work> batch_isend_irecv(ProcessGroup& g, const std::vector<P2POp>& ops) {
  std::vector<detail::LinkDelay> links;
  if (detail::g_sim_link.on) [[unlikely]]
    for (const auto& op : ops)
      links.emplace_back(op.peer != g.rank(), op.tensor.nbytes(),
                         op.kind == P2POp::Kind::recv ? detail::LinkDirection::in : detail::LinkDirection::out);
  auto works = engine_of(g).batch(ops);
  std::vector<Work> out;
  out.reserve(ops.size());
  for (size_t i = 0; i < works.size(); ++i) {
    if (links.empty()) out.emplace_back(std::move(works[i]));
    else out.emplace_back(links[i].wrap(std::move(works[i])));
  }
  return out;
}

}  // namespace symmflow::dist
