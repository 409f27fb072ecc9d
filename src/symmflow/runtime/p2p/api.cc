// The public P2P functions (p2p.h: isend, irecv, batch_isend_irecv), the
// WorkImpl of a P2P operation (test / block), and the P2P side of the progress
// rule (progress.h: p2p_progress, p2p_pending, p2p_activity). The engine is a
// per-group extension, created on first use.
#include "symmflow/core/error.h"
#include "symmflow/runtime/p2p/engine.h"
#include "symmflow/runtime/progress.h"

namespace symmflow::dist {

namespace {

P2PEngine& engine_of(ProcessGroup& g) { return detail::GroupAccess::extension<P2PEngine>(g); }

std::shared_ptr<P2PEngine> lock(const P2PWork& w) {
  auto e = w.engine.lock();
  SF_CHECK(e != nullptr, "{} to/from rank {} (tag {}): its process group was destroyed before "
           "the operation completed", w.op(), w.peer, w.tag);
  return e;
}

}  // namespace

namespace detail {
void p2p_progress(ProcessGroup& g) { engine_of(g).progress(); }
bool p2p_pending(ProcessGroup& g) { return engine_of(g).pending(); }
uint64_t p2p_activity(ProcessGroup& g) { return engine_of(g).activity(); }
void p2p_set_eager_max_bytes(ProcessGroup& g, size_t bytes) { engine_of(g).set_eager_max_bytes(bytes); }
}  // namespace detail

bool P2PWork::test() {
  if (!done) lock(*this)->progress();
  return done;
}

void P2PWork::block() {
  if (!done) lock(*this)->wait(*this);
}

Work isend(ProcessGroup& g, const Tensor& t, int dst, int tag) {
  auto& e = engine_of(g);
  auto w = e.make_work(P2POp::Kind::send, t, dst, tag);
  e.post_send(w);
  e.progress();
  return Work(w);
}

Work irecv(ProcessGroup& g, const Tensor& t, int src, int tag) {
  auto& e = engine_of(g);
  auto w = e.make_work(P2POp::Kind::recv, t, src, tag);
  e.post_recv(w);
  e.progress();
  return Work(w);
}

std::vector<Work> batch_isend_irecv(ProcessGroup& g, const std::vector<P2POp>& ops) {
  auto& e = engine_of(g);
  std::vector<std::shared_ptr<P2PWork>> works(ops.size());
  for (size_t i = 0; i < ops.size(); ++i)  // validate everything before posting anything
    works[i] = e.make_work(ops[i].kind, ops[i].tensor, ops[i].peer, ops[i].tag);
  for (size_t i = 0; i < ops.size(); ++i)
    if (ops[i].kind == P2POp::Kind::recv) e.post_recv(works[i]);
  for (size_t i = 0; i < ops.size(); ++i)
    if (ops[i].kind == P2POp::Kind::send) e.post_send(works[i]);
  e.progress();
  std::vector<Work> out;
  out.reserve(ops.size());
  for (auto& w : works) out.emplace_back(std::move(w));
  return out;
}

}  // namespace symmflow::dist
