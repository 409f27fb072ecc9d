// Point-to-point (p2p.h) over the group segment's per-pair blocks (channel.h).
//
// For a message from s to r, the pair's control rings carry (r -> s) a receive
// post {tag, tag sequence, bytes, heap offset of r's buffer if symmetric and
// contiguous}, and (s -> r) one of: put done (s wrote r's buffer through
// peer_ptr), send ready (s's own symmetric buffer is at offset o: r copies from
// it, then tells s "read done"), chunks in the mailbox (staged), size mismatch.
// Matching: the k-th send of s to r with tag t matches the k-th receive of r
// from s with tag t (both sides number them), whatever the other tags do.
//
// Progress is single-threaded and explicit: every call of progress() consumes
// all incoming control events, drives staged sends and flushes queued events.
// Nothing here blocks except P2PEngine::wait(), which sleeps in wait_slow() on
// this rank's wake word until any counter it depends on moves.
#include "symmflow/runtime/p2p/p2p.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <exception>
#include <unordered_map>
#include <utility>

#include "symmflow/core/error.h"
#include "symmflow/runtime/copy_stats.h"
#include "symmflow/runtime/shm/group_segment.h"
#include "symmflow/runtime/p2p/channel.h"
#include "symmflow/runtime/progress.h"
#include "symmflow/runtime/shm/wait.h"

namespace symmflow::dist {

namespace {

using runtime::P2PEvent;
using runtime::P2PPairBlock;
using Clock = std::chrono::steady_clock;

enum EventType : uint32_t {
  kRecvPost = 1,  // receiver -> sender: a = tag sequence, b = bytes, c = heap offset + 1 (0: none)
  kPutDone,       // sender -> receiver: the data is in the receive buffer
  kSendReady,     // sender -> receiver: a = heap offset of the (symmetric) send buffer
  kChunk,         // sender -> receiver: a = byte offset in the message, b = length, c = mailbox slot
  kReadDone,      // receiver -> sender: done reading the send buffer (answer to kSendReady)
  kSizeError,     // sender -> receiver: a = the sender's byte count
};

// A tensor's elements in row-major order, as (coalesced) strided loops.
struct Geometry {
  char* base = nullptr;
  size_t item = 1;
  std::vector<int64_t> sizes, strides;  // elements; innermost last; never empty
  bool contiguous() const { return sizes.size() == 1 && strides[0] == 1; }
};

Geometry geometry_of(const Tensor& t) {
  Geometry g;
  g.item = t.itemsize();
  if (t.numel() == 0) {
    g.sizes = {0};
    g.strides = {1};
    return g;
  }
  g.base = static_cast<char*>(t.data_ptr());
  for (int64_t d = 0; d < t.dim(); ++d) {
    int64_t n = t.sizes()[size_t(d)], s = t.strides()[size_t(d)];
    if (n == 1) continue;
    if (!g.sizes.empty() && g.strides.back() == s * n) {  // merge with the outer dim
      g.sizes.back() *= n;
      g.strides.back() = s;
    } else {
      g.sizes.push_back(n);
      g.strides.push_back(s);
    }
  }
  if (g.sizes.empty()) {
    g.sizes = {1};
    g.strides = {1};
  }
  return g;
}

template <size_t N>
void copy_elems(char* elem, int64_t stride_bytes, char* buf, size_t n, bool gather) {
  if (gather)
    for (size_t i = 0; i < n; ++i, elem += stride_bytes, buf += N) std::memcpy(buf, elem, N);
  else
    for (size_t i = 0; i < n; ++i, elem += stride_bytes, buf += N) std::memcpy(elem, buf, N);
}

// Copies elements [first, first+count) of the tensor (row-major order) to buf
// (gather) or from buf into the tensor (scatter). buf is contiguous.
void strided_copy(const Geometry& g, size_t first, size_t count, char* buf, bool gather) {
  if (count == 0) return;
  const size_t item = g.item;
  if (g.contiguous()) {
    char* p = g.base + first * item;
    if (gather) std::memcpy(buf, p, count * item);
    else std::memcpy(p, buf, count * item);
    return;
  }
  const size_t nd = g.sizes.size();
  std::vector<int64_t> idx(nd, 0);
  size_t rest = first;
  for (size_t d = nd; d-- > 0;) {
    idx[d] = int64_t(rest % size_t(g.sizes[d]));
    rest /= size_t(g.sizes[d]);
  }
  const int64_t inner_stride = g.strides[nd - 1] * int64_t(item);
  while (count > 0) {
    int64_t off = 0;
    for (size_t d = 0; d < nd; ++d) off += idx[d] * g.strides[d];
    char* p = g.base + off * int64_t(item);
    size_t n = std::min(count, size_t(g.sizes[nd - 1] - idx[nd - 1]));
    if (g.strides[nd - 1] == 1) {
      if (gather) std::memcpy(buf, p, n * item);
      else std::memcpy(p, buf, n * item);
    } else {
      switch (item) {
        case 1: copy_elems<1>(p, inner_stride, buf, n, gather); break;
        case 2: copy_elems<2>(p, inner_stride, buf, n, gather); break;
        case 4: copy_elems<4>(p, inner_stride, buf, n, gather); break;
        case 8: copy_elems<8>(p, inner_stride, buf, n, gather); break;
        default:
          for (size_t i = 0; i < n; ++i) {
            if (gather) std::memcpy(buf + i * item, p + int64_t(i) * inner_stride, item);
            else std::memcpy(p + int64_t(i) * inner_stride, buf + i * item, item);
          }
      }
    }
    buf += n * item;
    count -= n;
    idx[nd - 1] += int64_t(n);
    for (size_t d = nd - 1; d > 0 && idx[d] == g.sizes[d]; --d) {
      idx[d] = 0;
      ++idx[d - 1];
    }
  }
}

}  // namespace

class P2PEngine;

class P2PWork final : public WorkImpl {
 public:
  bool test() override;
  void block() override;
  enum class State { queued, reading, staged, net, done };
  P2POp::Kind kind;
  std::weak_ptr<P2PEngine> engine;
  int peer = 0, tag = 0;
  uint64_t seq = 0;   // per (peer, tag), from 1
  uint64_t post = 0;  // the pair's receive-post index (receives: at post; sends: at match)
  Tensor tensor;
  Geometry geo;
  size_t nbytes = 0;
  int64_t sym_off = -1;  // heap offset in the group when symmetric + contiguous
  size_t bytes_done = 0;  // staged
  State state = State::queued;
  NetLink::Request req = -1;  // peer on another node
  std::vector<char> stage;    // its packed copy, when the tensor is strided
  bool done = false;

  const char* op() const { return kind == P2POp::Kind::send ? "isend" : "irecv"; }
};

class P2PEngine : public std::enable_shared_from_this<P2PEngine> {
 public:
  explicit P2PEngine(ProcessGroup& g)
      : g_(g), seg_(g.node_group().segment()), me_(g.rank()), lme_(g.local_index(g.rank())),
        local_(g.node_ranks(g.node())), peers_(size_t(g.size())) {
    for (int p : local_) {
      peers_[size_t(p)].head = pair(me_, p).head.load(std::memory_order_relaxed);
      peers_[size_t(p)].tail = pair(p, me_).tail.load(std::memory_order_relaxed);
      peers_[size_t(p)].drained = pair(p, me_).drained.load(std::memory_order_relaxed);
      peers_[size_t(p)].chunks = pair(me_, p).drained.load(std::memory_order_acquire);
    }
  }

  std::shared_ptr<P2PWork> make(P2POp::Kind kind, const Tensor& t, int peer, int tag) {
    SF_CHECK(t.defined() && !t.is_meta(), "{}: expected a tensor with data, got {}",
             kind == P2POp::Kind::send ? "isend" : "irecv",
             t.defined() ? t.type_string() : std::string("an undefined tensor"));
    SF_CHECK(peer >= 0 && peer < g_.size(), "{}: group '{}' has ranks 0..{}, found peer {}",
             kind == P2POp::Kind::send ? "isend" : "irecv", g_.name(), g_.size() - 1, peer);
    auto w = std::make_shared<P2PWork>();
    w->kind = kind;
    w->engine = weak_from_this();
    w->peer = peer;
    w->tag = tag;
    w->tensor = t;
    w->geo = geometry_of(t);
    w->nbytes = t.nbytes();
    w->sym_off = symmetric_offset(t);
    return w;
  }

  // Sum of every counter whose change can let a pending op progress: heads of
  // incoming rings, tails of outgoing rings, drained mailboxes. Only grows.
  uint64_t activity() const {
    uint64_t s = 0;
    for (int p : local_) {
      s += pair(p, me_).head.load(std::memory_order_acquire);
      const P2PPairBlock& out = pair(me_, p);
      s += out.tail.load(std::memory_order_acquire) + out.drained.load(std::memory_order_acquire);
    }
    return s;
  }

  // Operations posted and not complete (the progress rule of progress.h).
  bool pending() const { return inflight_ != 0; }

  void post_recv(const std::shared_ptr<P2PWork>& w) {
    ++inflight_;
    Peer& pp = peers_[size_t(w->peer)];
    w->seq = ++pp.recv_seq[w->tag];
    if (!g_.is_shm_reachable(w->peer)) return post_net(w);
    w->post = ++pp.posts;
    pp.recvs.emplace(w->post, w);
    P2PEvent e{};
    e.type = kRecvPost;
    e.tag = w->tag;
    e.post = w->post;
    e.a = w->seq;
    e.b = w->nbytes;
    e.c = uint64_t(w->sym_off + 1);
    push(w->peer, e);
  }

  void post_send(const std::shared_ptr<P2PWork>& w) {
    ++inflight_;
    Peer& pp = peers_[size_t(w->peer)];
    w->seq = ++pp.send_seq[w->tag];
    if (!g_.is_shm_reachable(w->peer)) return post_net(w);
    auto it = pp.unmatched.find(w->tag);
    if (it != pp.unmatched.end() && !it->second.posts.empty()) {
      Desc d = it->second.posts.front();
      it->second.posts.pop_front();
      if (it->second.sends.empty() && it->second.posts.empty()) pp.unmatched.erase(it);
      match(w, d);
    } else {
      pp.unmatched[w->tag].sends.push_back(w);
    }
  }

  // One pass: consume every incoming event, flush queued events, drive staged sends.
  void progress() {
    for (int p : local_) consume(p);
    if (!net_pending_.empty()) poll_net();
    for (int p : local_) {
      flush(p);
      drive_staged(p);
    }
  }

  void wait(P2PWork& w) {
    if (w.done) return;
    const double timeout_s = runtime::wait_timeout_s();
    const auto start = Clock::now();
    const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(timeout_s));
    // "tag 3 sequence 2", for the wait site and messages (no allocation).
    char buf[64];
    const auto n = fmt::format_to_n(buf, sizeof buf, "tag {} sequence {}", w.tag, w.seq).size;
    const std::string_view what(buf, std::min(n, sizeof buf));
    runtime::WaitSite site{w.op(), what, g_.name(), me_, w.peer};
    auto next_check = start + std::chrono::milliseconds(50);
    for (;;) {
      // Snapshot before progressing: anything that arrives later changes it.
      const uint64_t snap = activity();
      progress();
      if (w.done) return;
      auto now = Clock::now();
      if (now >= next_check) {  // the peer may be dead while others keep us busy
        try {
          g_.liveness()->check(site);
        } catch (...) {
          progress();  // what the peer published before it died still counts
          if (w.done) return;
          runtime::note_comm_failure();
          throw;
        }
        next_check = now + std::chrono::milliseconds(50);
      }
      if (now >= deadline) {
        runtime::note_comm_failure();
        throw TimeoutError(fmt::format(
            "timeout after {:.3g} s in {} {}: group '{}', rank {} waiting for rank {}: {} "
            "(raise SYMMFLOW_TIMEOUT or dist::set_timeout() if the peer is just slow)",
            timeout_s, w.op(), what, g_.name(), me_, w.peer, describe(w)));
      }
      if (net_pending_.empty()) {
        runtime::wait_slow([&] { return activity() != snap || Clock::now() >= deadline; },
                           wake(me_), site, g_.liveness(), [&] { return describe(w); });
      } else {
        // Network requests move only when polled: no futex sleep.
        runtime::wait_poll([&] { return activity() != snap || poll_net() || Clock::now() >= deadline; },
                           site, g_.liveness(), [&] { return describe(w); });
      }
    }
  }

 private:
  struct Desc {
    uint64_t post, seq, nbytes;
    int64_t off;  // receive buffer's heap offset, -1: not symmetric + contiguous
  };
  struct TagQueue {
    std::deque<std::shared_ptr<P2PWork>> sends;  // sends waiting for a receive post
    std::deque<Desc> posts;                       // receive posts waiting for a send
  };
  struct Peer {
    // me as the receiver from this peer
    uint64_t posts = 0;
    std::unordered_map<int, uint64_t> recv_seq;
    std::unordered_map<uint64_t, std::shared_ptr<P2PWork>> recvs;  // by post, not complete
    uint64_t drained = 0;  // mailbox chunks (peer -> me) copied out
    // me as the sender to this peer
    std::unordered_map<int, uint64_t> send_seq;
    std::unordered_map<int, TagQueue> unmatched;
    std::unordered_map<uint64_t, std::shared_ptr<P2PWork>> reading;  // by post
    std::deque<std::pair<std::shared_ptr<P2PWork>, Desc>> staged;    // mailbox order
    size_t staged_off = 0;  // bytes of staged.front() already in the mailbox
    uint64_t chunks = 0;    // mailbox chunks (me -> peer) filled
    // control ring me -> peer (head) and peer -> me (tail)
    std::deque<P2PEvent> outbox;
    uint64_t head = 0, tail = 0;
  };

  // Shared memory is indexed by node-local ranks.
  P2PPairBlock& pair(int from, int to) const {
    return seg_.p2p_pair(g_.local_index(from), g_.local_index(to));
  }
  runtime::WakeWord& wake(int p) const { return seg_.wake(g_.local_index(p)); }

  // A peer on another node: the message goes over the group's NetLink as is
  // (contiguous) or through a packed copy (counted), matched by MPI per tag.
  void post_net(const std::shared_ptr<P2PWork>& w) {
    NetLink& net = *g_.net();
    const bool direct = w->geo.contiguous() || w->nbytes == 0;
    char* buf = direct ? w->geo.base : nullptr;
    if (!direct) {
      w->stage.resize(w->nbytes);
      buf = w->stage.data();
      if (w->kind == P2POp::Kind::send) {
        strided_copy(w->geo, 0, w->nbytes / w->geo.item, buf, /*gather=*/true);
        count_staged_copy(w->nbytes);
      }
    }
    w->req = w->kind == P2POp::Kind::send
                 ? net.isend(buf, w->nbytes, w->peer, w->tag, NetLink::Lane::p2p)
                 : net.irecv(buf, w->nbytes, w->peer, w->tag, NetLink::Lane::p2p);
    w->state = P2PWork::State::net;
    net_pending_.push_back(w);
  }

  // Tests every pending network request; true when any completed.
  bool poll_net() {
    bool any = false;
    for (size_t i = 0; i < net_pending_.size();) {
      auto& w = net_pending_[i];
      size_t got = 0;
      if (!g_.net()->test(w->req, &got)) {
        ++i;
        continue;
      }
      any = true;
      if (w->kind == P2POp::Kind::recv && got != w->nbytes) {
        error(*w, fmt::format(
            "irecv size mismatch in group '{}': rank {} receives {} bytes ({}) from rank {} with "
            "tag {} (sequence {}), but rank {} sent {} bytes",
            g_.name(), me_, w->nbytes, w->tensor.type_string(), w->peer, w->tag, w->seq, w->peer,
            got));
      } else {
        if (w->kind == P2POp::Kind::recv && !w->stage.empty()) {
          strided_copy(w->geo, 0, w->nbytes / w->geo.item, w->stage.data(), /*gather=*/false);
          count_staged_copy(w->nbytes);
        }
        w->bytes_done = w->nbytes;
        complete(*w);
      }
      w->stage = {};
      net_pending_[i] = net_pending_.back();
      net_pending_.pop_back();
    }
    return any;
  }

  int64_t symmetric_offset(const Tensor& t) const {
    if (t.nbytes() == 0 || !t.is_symmetric() || !t.is_contiguous()) return -1;
    SymmetricRegion* r = t.storage()->symmetric();
    if (r->group_name() != g_.name()) return -1;
    // The same group segment (not just the same name).
    if (static_cast<char*>(r->peer_ptr(me_)) != seg_.heap_base(lme_) + r->heap_offset()) return -1;
    return int64_t(r->heap_offset() + size_t(t.storage_offset()) * t.itemsize());
  }


  bool try_push(int p, const P2PEvent& e) {
    Peer& pp = peers_[size_t(p)];
    P2PPairBlock& b = pair(me_, p);
    if (pp.head - b.tail.load(std::memory_order_acquire) >= uint64_t(runtime::kP2PRing)) return false;
    b.ring[pp.head % runtime::kP2PRing] = e;
    b.head.store(++pp.head, std::memory_order_release);
    runtime::notify(wake(p));
    return true;
  }

  void push(int p, const P2PEvent& e) {
    Peer& pp = peers_[size_t(p)];
    if (pp.outbox.empty() && try_push(p, e)) return;
    pp.outbox.push_back(e);  // the ring is full: flushed by a later progress()
  }

  void flush(int p) {
    Peer& pp = peers_[size_t(p)];
    if (pp.outbox.empty()) return;
    P2PPairBlock& b = pair(me_, p);
    uint64_t tail = b.tail.load(std::memory_order_acquire);
    uint64_t h = pp.head;
    while (!pp.outbox.empty() && h - tail < uint64_t(runtime::kP2PRing)) {
      b.ring[h++ % runtime::kP2PRing] = pp.outbox.front();
      pp.outbox.pop_front();
    }
    if (h != pp.head) {
      pp.head = h;
      b.head.store(h, std::memory_order_release);
      runtime::notify(wake(p));
    }
  }

  void consume(int p) {
    Peer& pp = peers_[size_t(p)];
    P2PPairBlock& b = pair(p, me_);
    const uint64_t h = b.head.load(std::memory_order_acquire);
    if (h == pp.tail) return;
    while (pp.tail < h) {
      P2PEvent e = b.ring[pp.tail % runtime::kP2PRing];
      ++pp.tail;
      handle(p, e);
    }
    b.tail.store(pp.tail, std::memory_order_release);
    runtime::notify(wake(p));
  }

  std::shared_ptr<P2PWork> take(std::unordered_map<uint64_t, std::shared_ptr<P2PWork>>& m,
                                 int p, const P2PEvent& e) {
    auto it = m.find(e.post);
    if (it == m.end())
      fail("P2P protocol error in group '{}': rank {} got event {} from rank {} for unknown "
           "message (post #{}, tag {})", g_.name(), me_, e.type, p, e.post, e.tag);
    auto w = std::move(it->second);
    m.erase(it);
    return w;
  }

  void handle(int p, const P2PEvent& e) {
    Peer& pp = peers_[size_t(p)];
    switch (e.type) {
      case kRecvPost: {
        Desc d{e.post, e.a, e.b, int64_t(e.c) - 1};
        auto& q = pp.unmatched[e.tag];
        if (!q.sends.empty()) {
          auto w = std::move(q.sends.front());
          q.sends.pop_front();
          if (q.sends.empty() && q.posts.empty()) pp.unmatched.erase(e.tag);
          match(w, d);
        } else {
          q.posts.push_back(d);
        }
        break;
      }
      case kPutDone:
        complete(*take(pp.recvs, p, e));
        break;
      case kSendReady: {
        auto w = take(pp.recvs, p, e);
        strided_copy(w->geo, 0, w->nbytes / w->geo.item,
                     static_cast<char*>(g_.heap().peer_ptr(p, e.a)), /*gather=*/false);
        P2PEvent r{};
        r.type = kReadDone;
        r.tag = e.tag;
        r.post = e.post;
        push(p, r);
        complete(*w);
        break;
      }
      case kChunk: {
        auto it = pp.recvs.find(e.post);
        if (it == pp.recvs.end()) take(pp.recvs, p, e);  // throws
        P2PWork& w = *it->second;
        strided_copy(w.geo, e.a / w.geo.item, e.b / w.geo.item,
                     pair(p, me_).mailbox[e.c], /*gather=*/false);
        pair(p, me_).drained.store(++pp.drained, std::memory_order_release);
        runtime::notify(wake(p));
        w.bytes_done += e.b;
        w.state = P2PWork::State::staged;
        if (w.bytes_done == w.nbytes) {
          count_staged_copy(w.nbytes);  // the copy out of the mailbox
          complete(*take(pp.recvs, p, e));
        }
        break;
      }
      case kReadDone:
        complete(*take(pp.reading, p, e));
        break;
      case kSizeError: {
        auto w = take(pp.recvs, p, e);
        error(*w, fmt::format(
            "irecv size mismatch in group '{}': rank {} receives {} bytes ({}) from rank {} with "
            "tag {} (sequence {}), but rank {} sends {} bytes",
            g_.name(), me_, w->nbytes, w->tensor.type_string(), p, w->tag, w->seq, p, e.a));
        break;
      }
      default:
        fail("P2P protocol error in group '{}': rank {} got event type {} from rank {}",
             g_.name(), me_, e.type, p);
    }
  }

  // A send meets its receive post: choose the protocol.
  void match(const std::shared_ptr<P2PWork>& w, const Desc& d) {
    const int p = w->peer;
    Peer& pp = peers_[size_t(p)];
    w->post = d.post;
    P2PEvent e{};
    e.tag = w->tag;
    e.post = d.post;
    if (d.nbytes != w->nbytes) {
      e.type = kSizeError;
      e.a = w->nbytes;
      push(p, e);
      error(*w, fmt::format(
          "isend size mismatch in group '{}': rank {} sends {} bytes ({}) to rank {} with tag {} "
          "(sequence {}), but rank {} receives {} bytes",
          g_.name(), me_, w->nbytes, w->tensor.type_string(), p, w->tag, w->seq, p, d.nbytes));
      return;
    }
    const bool reachable = g_.is_shm_reachable(p);
    if (w->nbytes == 0 || (d.off >= 0 && reachable)) {
      // One-sided put straight into the receiver's buffer (zero copy; a strided
      // send buffer is gathered directly into it).
      if (w->nbytes)
        strided_copy(w->geo, 0, w->nbytes / w->geo.item,
                     static_cast<char*>(g_.heap().peer_ptr(p, size_t(d.off))), /*gather=*/true);
      e.type = kPutDone;
      push(p, e);
      complete(*w);
    } else if (w->sym_off >= 0 && reachable) {
      // The receiver reads straight from my symmetric buffer.
      e.type = kSendReady;
      e.a = uint64_t(w->sym_off);
      w->state = P2PWork::State::reading;
      pp.reading.emplace(d.post, w);
      push(p, e);
    } else {
      w->state = P2PWork::State::staged;
      pp.staged.emplace_back(w, d);
    }
  }

  void drive_staged(int p) {
    Peer& pp = peers_[size_t(p)];
    P2PPairBlock& b = pair(me_, p);
    while (!pp.staged.empty()) {
      if (pp.chunks - b.drained.load(std::memory_order_acquire) >= uint64_t(runtime::kMailboxSlots))
        return;
      auto& [w, d] = pp.staged.front();
      const size_t chunk = runtime::kMailboxChunk / w->geo.item * w->geo.item;
      const size_t len = std::min(chunk, w->nbytes - pp.staged_off);
      const uint64_t slot = pp.chunks % runtime::kMailboxSlots;
      strided_copy(w->geo, pp.staged_off / w->geo.item, len / w->geo.item, b.mailbox[slot],
                   /*gather=*/true);
      P2PEvent e{};
      e.type = kChunk;
      e.tag = w->tag;
      e.post = d.post;
      e.a = pp.staged_off;
      e.b = len;
      e.c = slot;
      ++pp.chunks;
      pp.staged_off += len;
      w->bytes_done = pp.staged_off;
      push(p, e);
      if (pp.staged_off == w->nbytes) {
        count_staged_copy(w->nbytes);  // the copy into the mailbox
        complete(*w);
        pp.staged.pop_front();
        pp.staged_off = 0;
      }
    }
  }

  void complete(P2PWork& w) {
    if (!w.done) --inflight_;
    w.done = true;
    w.state = P2PWork::State::done;
    w.tensor = Tensor();  // the caller keeps its own handle
    w.geo = Geometry();
  }
  void error(P2PWork& w, std::string msg) {
    w.error = std::make_exception_ptr(Error(msg));
    complete(w);
  }

  std::string describe(const P2PWork& w) const {
    const int p = w.peer;
    std::string s;
    if (w.state == P2PWork::State::net) {
      s = fmt::format("{} of {} bytes over {} to/from rank {} (another node) has not completed",
                      w.kind == P2POp::Kind::send ? "send" : "receive", w.nbytes,
                      g_.net()->describe(), p);
    } else if (w.kind == P2POp::Kind::recv) {
      if (w.bytes_done == 0)
        s = fmt::format("receive of {} bytes posted (post #{} to rank {}), no matching send has "
                        "arrived from rank {}", w.nbytes, w.post, p, p);
      else
        s = fmt::format("staged receive: {} of {} bytes arrived", w.bytes_done, w.nbytes);
    } else {
      switch (w.state) {
        case P2PWork::State::queued:
          s = fmt::format("send of {} bytes: rank {} has posted no matching receive", w.nbytes, p);
          break;
        case P2PWork::State::reading:
          s = fmt::format("send of {} bytes: waiting for rank {} to read it from the symmetric "
                          "buffer", w.nbytes, p);
          break;
        default:
          s = fmt::format("staged send: {} of {} bytes in the mailbox, waiting for rank {} to "
                          "drain it", w.bytes_done, w.nbytes, p);
      }
    }
    return s;
  }

  ProcessGroup& g_;
  runtime::GroupSegment& seg_;
  int me_, lme_;
  std::vector<int> local_;  // group ranks on my node (shared memory), me included
  std::vector<std::shared_ptr<P2PWork>> net_pending_;  // on the NetLink
  size_t inflight_ = 0;  // posted, not complete
  std::vector<Peer> peers_;
};

namespace {

P2PEngine& engine_of(ProcessGroup& g) { return g.extension<P2PEngine>(); }

}  // namespace

namespace detail {
void p2p_progress(ProcessGroup& g) { engine_of(g).progress(); }
bool p2p_pending(ProcessGroup& g) { return engine_of(g).pending(); }
uint64_t p2p_activity(ProcessGroup& g) { return engine_of(g).activity(); }
}  // namespace detail

namespace {

std::shared_ptr<P2PEngine> lock(const P2PWork& w) {
  auto e = w.engine.lock();
  SF_CHECK(e != nullptr, "{} to/from rank {} (tag {}): its process group was destroyed before "
           "the operation completed", w.op(), w.peer, w.tag);
  return e;
}

}  // namespace

bool P2PWork::test() {
  if (!done) lock(*this)->progress();
  return done;
}

void P2PWork::block() {
  if (!done) lock(*this)->wait(*this);
}

Work isend(ProcessGroup& g, const Tensor& t, int dst, int tag) {
  auto& e = engine_of(g);
  auto w = e.make(P2POp::Kind::send, t, dst, tag);
  e.post_send(w);
  e.progress();
  return Work(w);
}

Work irecv(ProcessGroup& g, const Tensor& t, int src, int tag) {
  auto& e = engine_of(g);
  auto w = e.make(P2POp::Kind::recv, t, src, tag);
  e.post_recv(w);
  e.progress();
  return Work(w);
}

std::vector<Work> batch_isend_irecv(ProcessGroup& g, const std::vector<P2POp>& ops) {
  auto& e = engine_of(g);
  std::vector<std::shared_ptr<P2PWork>> impls(ops.size());
  for (size_t i = 0; i < ops.size(); ++i)  // validate everything before posting anything
    impls[i] = e.make(ops[i].kind, ops[i].tensor, ops[i].peer, ops[i].tag);
  for (size_t i = 0; i < ops.size(); ++i)
    if (ops[i].kind == P2POp::Kind::recv) e.post_recv(impls[i]);
  for (size_t i = 0; i < ops.size(); ++i)
    if (ops[i].kind == P2POp::Kind::send) e.post_send(impls[i]);
  e.progress();
  std::vector<Work> out;
  out.reserve(ops.size());
  for (auto& w : impls) out.emplace_back(std::move(w));
  return out;
}

}  // namespace symmflow::dist
