// Matching (engine.h): per-(peer, tag) sequence numbers, receive posts, and the
// choice of protocol when a send meets the receive post with the same key
// (rendezvous put / read / mailbox, or eager when the post has not arrived).
// Also the completion of an operation, with or without an error.
#include <exception>

#include "symmflow/core/error.h"
#include "symmflow/runtime/p2p/engine.h"

namespace symmflow::dist {

using runtime::P2PEvent;
using runtime::P2PEventType;

std::shared_ptr<P2PWork> P2PEngine::make_work(P2POp::Kind kind, const Tensor& t, int peer, int tag) {
  const char* op = kind == P2POp::Kind::send ? "isend" : "irecv";
  SF_CHECK(t.defined() && !t.is_meta(), "{}: expected a tensor with data, got {}", op,
           t.defined() ? t.type_string() : std::string("an undefined tensor"));
  SF_CHECK(peer >= 0 && peer < group_.size(), "{}: group '{}' has ranks 0..{}, found peer {}", op,
           group_.name(), group_.size() - 1, peer);
  auto w = std::make_shared<P2PWork>();
  w->kind = kind;
  w->engine = weak_from_this();
  w->peer = peer;
  w->tag = tag;
  w->tensor = t;
  w->layout = layout_of(t);
  w->nbytes = t.nbytes();
  w->heap_offset = symmetric_heap_offset(t);
  return w;
}

int64_t P2PEngine::symmetric_heap_offset(const Tensor& t) const {
  if (t.nbytes() == 0 || !t.is_symmetric() || !t.is_contiguous()) return -1;
  SymmetricRegion* r = t.storage()->symmetric();
  if (r->group_name() != group_.name()) return -1;
  // The same group segment (not just the same name).
  const int local_index = group_.local_index(rank_);
  if (static_cast<char*>(r->peer_ptr(rank_)) != segment_.heap_base(local_index) + r->heap_offset())
    return -1;
  return int64_t(r->heap_offset() + size_t(t.storage_offset()) * t.itemsize());
}

void P2PEngine::post_recv(const std::shared_ptr<P2PWork>& w) {
  ++pending_ops_;
  PeerState& peer = peers_[size_t(w->peer)];
  w->tag_seq = ++peer.recv_seq_by_tag[w->tag];
  if (!group_.is_shm_reachable(w->peer)) return post_net(w);
  // An eager message that came first: take it, no post needed.
  auto arrived = peer.eager_unmatched.find(w->key());
  if (arrived != peer.eager_unmatched.end()) {
    EagerArrival a = arrived->second;
    peer.eager_unmatched.erase(arrived);
    deliver_eager(w->peer, *w, a);
    return;
  }
  peer.recvs_waiting.emplace(w->key(), w);
  P2PEvent e = event(P2PEventType::recv_posted, *w);
  e.recv_posted.nbytes = w->nbytes;
  e.recv_posted.heap_offset = w->heap_offset;
  push(w->peer, e);
}

void P2PEngine::post_send(const std::shared_ptr<P2PWork>& w) {
  ++pending_ops_;
  PeerState& peer = peers_[size_t(w->peer)];
  w->tag_seq = ++peer.send_seq_by_tag[w->tag];
  if (!group_.is_shm_reachable(w->peer)) return post_net(w);
  // A receive post already in the ring wins over eager: rendezvous puts the
  // data straight into the receive buffer and completes at once.
  consume(w->peer);
  auto it = peer.match_queues.find(w->tag);
  if (it != peer.match_queues.end() && !it->second.posts_waiting.empty()) {
    RecvPost post = it->second.posts_waiting.front();
    it->second.posts_waiting.pop_front();
    if (it->second.sends_waiting.empty() && it->second.posts_waiting.empty())
      peer.match_queues.erase(it);
    SF_CHECK(post.tag_seq == w->tag_seq,
             "P2P protocol error in group '{}': rank {} matches send {} to rank {} (tag {}) with "
             "receive post {}", group_.name(), rank_, w->tag_seq, w->peer, w->tag, post.tag_seq);
    match(w, post);
  } else if (!try_send_eager(w)) {
    peer.match_queues[w->tag].sends_waiting.push_back(w);
  }
}

void P2PEngine::on_recv_posted(int p, const P2PEvent& e) {
  PeerState& peer = peers_[size_t(p)];
  const MessageKey key{e.tag, e.tag_seq};
  // The send went eager while this post was on its way: the receiver matches it.
  if (crossed_eager_message(p, key)) return;
  RecvPost post{e.tag_seq, e.recv_posted.nbytes, e.recv_posted.heap_offset};
  auto& queue = peer.match_queues[e.tag];
  if (queue.sends_waiting.empty()) {
    queue.posts_waiting.push_back(post);
    return;
  }
  auto w = std::move(queue.sends_waiting.front());
  queue.sends_waiting.pop_front();
  if (queue.sends_waiting.empty() && queue.posts_waiting.empty()) peer.match_queues.erase(e.tag);
  SF_CHECK(post.tag_seq == w->tag_seq,
           "P2P protocol error in group '{}': rank {} matches send {} to rank {} (tag {}) with "
           "receive post {}", group_.name(), rank_, w->tag_seq, p, e.tag, post.tag_seq);
  match(w, post);
}

void P2PEngine::match(const std::shared_ptr<P2PWork>& w, const RecvPost& post) {
  const int p = w->peer;
  if (post.nbytes != w->nbytes) {
    P2PEvent e = event(P2PEventType::size_mismatch, *w);
    e.size_mismatch.sender_nbytes = w->nbytes;
    push(p, e);
    fail_work(*w, send_size_mismatch(*w, post.nbytes));
    return;
  }
  if (w->nbytes == 0 || post.heap_offset >= 0) {
    put_into_receiver(w, post);  // zero copy
  } else if (w->heap_offset >= 0) {
    offer_for_reading(w);  // zero copy
  } else {
    w->state = P2PWork::State::staged;  // two counted copies
    peers_[size_t(p)].staged_sends.emplace_back(w, post);
  }
}

std::shared_ptr<P2PWork> P2PEngine::take(WorkByKey& works, int p, const P2PEvent& e) {
  auto it = works.find(MessageKey{e.tag, e.tag_seq});
  if (it == works.end())
    fail("P2P protocol error in group '{}': rank {} got event {} from rank {} for unknown "
         "message (tag {}, sequence {})", group_.name(), rank_, uint32_t(e.type), p, e.tag, e.tag_seq);
  auto w = std::move(it->second);
  works.erase(it);
  return w;
}

void P2PEngine::complete(P2PWork& w) {
  if (!w.done) --pending_ops_;
  w.done = true;
  w.state = P2PWork::State::done;
  w.tensor = Tensor();  // the caller keeps its own handle
  w.layout = TensorLayout();
}

void P2PEngine::fail_work(P2PWork& w, std::string message) {
  w.error = std::make_exception_ptr(Error(message));
  complete(w);
}

std::string P2PEngine::recv_size_mismatch(const P2PWork& w, uint64_t sender_nbytes) const {
  return fmt::format(
      "irecv size mismatch in group '{}': rank {} receives {} bytes ({}) from rank {} with tag {} "
      "(sequence {}), but rank {} sends {} bytes",
      group_.name(), rank_, w.nbytes, w.tensor.type_string(), w.peer, w.tag, w.tag_seq, w.peer,
      sender_nbytes);
}

std::string P2PEngine::send_size_mismatch(const P2PWork& w, uint64_t receiver_nbytes) const {
  return fmt::format(
      "isend size mismatch in group '{}': rank {} sends {} bytes ({}) to rank {} with tag {} "
      "(sequence {}), but rank {} receives {} bytes",
      group_.name(), rank_, w.nbytes, w.tensor.type_string(), w.peer, w.tag, w.tag_seq, w.peer,
      receiver_nbytes);
}

}  // namespace symmflow::dist
