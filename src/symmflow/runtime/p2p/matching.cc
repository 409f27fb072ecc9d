// Matching (engine.h): per-(peer, tag) sequence numbers, receive posts, and the
// choice of protocol when a send meets the receive post with the same key
// (rendezvous put / read / mailbox, or eager when the post has not arrived).
// Also the completion of an operation, with or without an error.
#include <exception>

#include "symmflow/core/error.h"
#include "symmflow/runtime/copy_bytes.h"
#include "symmflow/runtime/p2p/engine.h"
#include "symmflow/runtime/progress.h"

namespace symmflow::dist {

using runtime::P2PEvent;
using runtime::P2PEventType;

namespace {

// P2PWork blocks (the Work and its shared_ptr control block, one allocation by
// allocate_shared) recycled per thread: an operation allocates nothing once the
// pool holds as many as are in flight. A block freed on another thread joins
// that thread's pool. The pool itself is trivially destructible, so a Work
// released after the thread's destructors ran (a static Work at exit) still
// finds it; WorkBlockPoolDrain frees the pooled blocks at thread exit and
// closes the pool (later releases go to operator delete).
constexpr int kMaxPooledBlocks = 64;
struct WorkBlockPool {
  void* free[kMaxPooledBlocks];
  int count;
  size_t size;  // bytes of a block (one type is pooled); 0 before the first
  bool closed;
};
thread_local WorkBlockPool t_work_pool{};
struct WorkBlockPoolDrain {
  bool armed = false;
  ~WorkBlockPoolDrain() {
    WorkBlockPool& pool = t_work_pool;
    for (int i = 0; i < pool.count; ++i) ::operator delete(pool.free[i]);
    pool.count = 0;
    pool.closed = true;
  }
};
thread_local WorkBlockPoolDrain t_work_pool_drain;

template <class T>
struct PoolAllocator {
  using value_type = T;
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);
  PoolAllocator() = default;
  template <class U>
  PoolAllocator(const PoolAllocator<U>&) {}  // NOLINT
  T* allocate(size_t n) {
    WorkBlockPool& pool = t_work_pool;
    if (n == 1 && pool.count > 0 && pool.size == sizeof(T)) return static_cast<T*>(pool.free[--pool.count]);
    return static_cast<T*>(::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) {
    WorkBlockPool& pool = t_work_pool;
    if (n == 1 && !pool.closed && pool.count < kMaxPooledBlocks &&
        (pool.size == sizeof(T) || pool.size == 0)) {
      if (pool.size == 0) {
        pool.size = sizeof(T);
        t_work_pool_drain.armed = true;  // constructs it: its destructor runs at thread exit
      }
      pool.free[pool.count++] = p;
      return;
    }
    ::operator delete(p);
  }
  template <class U>
  bool operator==(const PoolAllocator<U>&) const { return true; }
};

}  // namespace

std::shared_ptr<P2PWork> P2PEngine::make_work(P2POp::Kind kind, const Tensor& t, int peer, int tag) {
  const char* op = kind == P2POp::Kind::send ? "isend" : "irecv";
  SF_CHECK(t.defined() && !t.is_meta(), "{}: expected a tensor with data, got {}", op,
           t.defined() ? t.type_string() : std::string("an undefined tensor"));
  SF_CHECK(peer >= 0 && peer < group_.size(), "{}: group '{}' has ranks 0..{}, found peer {}", op,
           group_.name(), group_.size() - 1, peer);
  auto w = std::allocate_shared<P2PWork>(PoolAllocator<P2PWork>());
  w->kind = kind;
  w->engine = this;
  w->engine_id = id_;
  w->engine_generation = generation.load(std::memory_order_relaxed);
  w->peer = peer;
  w->tag = tag;
  w->tensor = t;
  w->itemsize = t.itemsize();
  const int64_t numel = t.numel();
  w->nbytes = size_t(numel) * w->itemsize;
  if (numel > 0) w->data = static_cast<char*>(t.data_ptr());
  w->contiguous = numel <= 1 || t.is_contiguous();
  if (!w->contiguous) {
    w->layout = strided_layout(t);
    w->contiguous = w->layout.contiguous();  // e.g. a column of a one-column matrix
  }
  w->wire.itemsize = uint32_t(w->itemsize);
  if (numel > 0) {
    if (w->contiguous) {
      w->heap_offset = symmetric_heap_offset(t);
    } else if (auto c = compact_layout(w->layout)) {
      w->heap_offset = symmetric_heap_offset(t);
      w->wire = *c;
    }
  }
  return w;
}

void P2PWork::pack(size_t first, size_t count, void* buffer) const {
  if (count == 0) return;
  if (contiguous) detail::copy_bytes(buffer, data + first * itemsize, count * itemsize);
  else pack_elements(layout, int64_t(first), int64_t(count), buffer, detail::copy_bytes);
}

void P2PWork::unpack(const void* buffer, size_t first, size_t count) const {
  if (count == 0) return;
  if (contiguous) detail::copy_bytes(data + first * itemsize, buffer, count * itemsize);
  else unpack_elements(buffer, layout, int64_t(first), int64_t(count), detail::copy_bytes);
}

void P2PWork::put_to(char* peer_data, const CompactLayout& l) const {
  if (nbytes == 0) return;
  if (l.dims() == 0) return pack_all(peer_data);
  const StridedLayout to = strided_layout(l, peer_data, nbytes);
  if (contiguous) unpack_elements(data, to, 0, to.numel(), detail::copy_bytes);
  else copy_elements(to, layout, detail::copy_bytes);
}

void P2PWork::get_from(const char* peer_data, const CompactLayout& l) const {
  if (nbytes == 0) return;
  if (l.dims() == 0) return unpack_all(peer_data);
  const StridedLayout from = strided_layout(l, const_cast<char*>(peer_data), nbytes);
  if (contiguous) pack_elements(from, 0, from.numel(), data, detail::copy_bytes);
  else copy_elements(layout, from, detail::copy_bytes);
}

// Of t's element 0; `t` is not empty and its layout is compact (make_work checked).
int64_t P2PEngine::symmetric_heap_offset(const Tensor& t) const {
  if (!t.is_symmetric()) return -1;
  SymmetricRegion* r = t.storage()->symmetric();
  // The same group segment (not just the same name).
  if (static_cast<char*>(r->peer_ptr(rank_)) != my_heap_base_ + r->heap_offset()) return -1;
  if (r->group_name() != group_.name()) return -1;
  return int64_t(r->heap_offset() + size_t(t.storage_offset()) * t.itemsize());
}

void P2PEngine::post_recv(const std::shared_ptr<P2PWork>& w) {
  ++pending_ops_;
  ++detail::p2p_ops_in_flight;
  PeerState& peer = peers_[size_t(w->peer)];
  w->tag_seq = peer.recv_seq.next(w->tag);
  if (!peer.in) return post_net(w);
  // An eager message that came first (the caller consumed the ring just
  // before): take it, no post needed.
  const MessageKey key = w->key();
  auto& arrived = peer.eager_unmatched;
  for (size_t i = 0; i < arrived.size(); ++i) {
    if (arrived[i].key != key) continue;
    const EagerArrival a = arrived[i];
    arrived.erase(arrived.begin() + ptrdiff_t(i));
    deliver_eager(w->peer, *w, a.nbytes, a.slot);
    return;
  }
  peer.recvs_waiting.push_back(w);
  P2PEvent e = event(P2PEventType::recv_posted, *w);
  e.recv_posted.nbytes = w->nbytes;
  e.recv_posted.heap_offset = w->heap_offset;
  e.recv_posted.layout = w->wire;
  push(w->peer, e);
}

void P2PEngine::post_send(const std::shared_ptr<P2PWork>& w) {
  ++pending_ops_;
  ++detail::p2p_ops_in_flight;
  PeerState& peer = peers_[size_t(w->peer)];
  w->tag_seq = peer.send_seq.next(w->tag);
  if (!peer.out) return post_net(w);
  // A receive post already consumed (the caller consumed the ring just before)
  // wins over eager: rendezvous puts the data straight into the receive buffer
  // and completes at once.
  auto& posts = peer.posts_waiting;
  for (size_t i = 0; i < posts.size(); ++i) {
    if (posts[i].tag != w->tag) continue;
    const RecvPost post = posts[i].post;
    posts.erase(posts.begin() + ptrdiff_t(i));
    SF_CHECK(post.tag_seq == w->tag_seq,
             "P2P protocol error in group '{}': rank {} matches send {} to rank {} (tag {}) with "
             "receive post {}", group_.name(), rank_, w->tag_seq, w->peer, w->tag, post.tag_seq);
    match(w, post);
    return;
  }
  if (!try_send_eager(w)) peer.sends_waiting.push_back(w);
}

void P2PEngine::on_recv_posted(int p, const P2PEvent& e) {
  PeerState& peer = peers_[size_t(p)];
  const MessageKey key{e.tag, e.tag_seq};
  // The send went eager while this post was on its way: the receiver matches it.
  if (crossed_eager_message(p, key)) return;
  const RecvPost post{e.tag_seq, e.recv_posted.nbytes, e.recv_posted.heap_offset, e.recv_posted.layout};
  auto& sends = peer.sends_waiting;
  for (size_t i = 0; i < sends.size(); ++i) {
    if (sends[i]->tag != e.tag) continue;
    auto w = std::move(sends[i]);
    sends.erase(sends.begin() + ptrdiff_t(i));
    SF_CHECK(post.tag_seq == w->tag_seq,
             "P2P protocol error in group '{}': rank {} matches send {} to rank {} (tag {}) with "
             "receive post {}", group_.name(), rank_, w->tag_seq, p, e.tag, post.tag_seq);
    match(w, post);
    return;
  }
  peer.posts_waiting.push_back({e.tag, post});
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

std::shared_ptr<P2PWork> P2PEngine::take(WorkList& works, int p, const P2PEvent& e) {
  const MessageKey key{e.tag, e.tag_seq};
  for (size_t i = 0; i < works.size(); ++i) {
    if (works[i]->key() != key) continue;
    auto w = std::move(works[i]);
    if (i + 1 != works.size()) works[i] = std::move(works.back());
    works.pop_back();
    return w;
  }
  fail("P2P protocol error in group '{}': rank {} got event {} from rank {} for unknown "
       "message (tag {}, sequence {})", group_.name(), rank_, uint32_t(e.type), p, e.tag, e.tag_seq);
}

void P2PEngine::complete(P2PWork& w) {
  if (!w.done) {
    --pending_ops_;
    --detail::p2p_ops_in_flight;
  }
  w.done = true;
  w.state = P2PWork::State::done;
  w.tensor = Tensor();  // the caller keeps its own handle
  w.data = nullptr;
  if (!w.contiguous) w.layout = StridedLayout();
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
