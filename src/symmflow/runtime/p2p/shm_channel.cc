// The shared-memory channel (engine.h, channel.h): the per-pair control rings
// (push / flush / consume, never blocking), the dispatch of incoming events,
// and the two zero-copy rendezvous paths: the one-sided put into the
// receiver's symmetric buffer and the receiver's read from the sender's.
#include <atomic>
#include <cstddef>
#include <cstring>

#include "symmflow/core/error.h"
#include "symmflow/runtime/p2p/engine.h"

namespace symmflow::dist {

using runtime::P2PEvent;
using runtime::P2PEventType;
using runtime::P2PPairBlock;

// Shared memory is indexed by node-local ranks.
P2PPairBlock& P2PEngine::pair(int from, int to) const {
  return *static_cast<P2PPairBlock*>(segment_.pair_block(group_.local_index(from), group_.local_index(to)));
}

P2PEvent P2PEngine::event(P2PEventType type, const P2PWork& w) const {
  P2PEvent e{};
  e.type = type;
  e.tag = w.tag;
  e.tag_seq = w.tag_seq;
  return e;
}

namespace {

// An event goes into its slot body first, then its sequence number (release):
// a receiver that acquires the number reads the whole event.
void write_event(P2PEvent& slot, const P2PEvent& e, uint64_t seq) {
  std::memcpy(static_cast<void*>(&slot), &e, offsetof(P2PEvent, seq));
  std::atomic_ref<uint64_t>(slot.seq).store(seq, std::memory_order_release);
}

bool event_ready(P2PEvent& slot, uint64_t seq) {
  return std::atomic_ref<uint64_t>(slot.seq).load(std::memory_order_acquire) == seq;
}

}  // namespace

bool P2PEngine::try_push(int p, const P2PEvent& e) {
  PeerState& peer = peers_[size_t(p)];
  P2PPairBlock& block = *peer.out;
  if (peer.ring_head - peer.seen_tail >= uint64_t(runtime::kP2PRing)) {
    peer.seen_tail = block.tail.load(std::memory_order_acquire);
    if (peer.ring_head - peer.seen_tail >= uint64_t(runtime::kP2PRing)) return false;
  }
  const uint64_t index = peer.ring_head++;
  write_event(block.ring[index % runtime::kP2PRing], e, index + 1);
  block.head.store(peer.ring_head, std::memory_order_release);  // for sleepers (activity())
  peer.notify_due = true;
  return true;
}

void P2PEngine::push(int p, const P2PEvent& e) {
  PeerState& peer = peers_[size_t(p)];
  if (peer.outbox.empty() && try_push(p, e)) return;
  peer.outbox.push_back(e);  // the ring is full: flushed by a later progress()
}

void P2PEngine::flush(int p) {
  PeerState& peer = peers_[size_t(p)];
  if (peer.outbox.empty()) return;
  P2PPairBlock& block = *peer.out;
  peer.seen_tail = block.tail.load(std::memory_order_acquire);
  uint64_t head = peer.ring_head;
  while (!peer.outbox.empty() && head - peer.seen_tail < uint64_t(runtime::kP2PRing)) {
    write_event(block.ring[head % runtime::kP2PRing], peer.outbox.front(), head + 1);
    ++head;
    peer.outbox.pop_front();
  }
  if (head != peer.ring_head) {
    peer.ring_head = head;
    block.head.store(head, std::memory_order_release);
    peer.notify_due = true;
  }
}

// Polls the next slot's sequence number, not `head` (the sender's counter
// line stays in its cache; one line moves per event).
void P2PEngine::consume(int p) {
  PeerState& peer = peers_[size_t(p)];
  P2PPairBlock& block = *peer.in;
  const uint64_t first = peer.ring_tail;
  for (;;) {
    P2PEvent& slot = block.ring[peer.ring_tail % runtime::kP2PRing];
    if (!event_ready(slot, peer.ring_tail + 1)) break;
    P2PEvent e;
    std::memcpy(static_cast<void*>(&e), &slot, sizeof e);
    ++peer.ring_tail;
    handle(p, e);
  }
  if (peer.ring_tail == first) return;
  block.tail.store(peer.ring_tail, std::memory_order_release);
  peer.notify_due = true;  // a sender waiting for room in the ring
}

// The seq_cst fence of runtime::notify() once per peer and pass, after every
// store of the pass (release stores: the peer's acquire loads see the data).
void P2PEngine::notify_peers() {
  for (int p : node_ranks_) {
    PeerState& peer = peers_[size_t(p)];
    if (!peer.notify_due) continue;
    peer.notify_due = false;
    runtime::notify(*peer.wake);
  }
}

void P2PEngine::handle(int p, const P2PEvent& e) {
  PeerState& peer = peers_[size_t(p)];
  switch (e.type) {
    case P2PEventType::recv_posted:
      on_recv_posted(p, e);
      break;
    case P2PEventType::put_done:
      complete(*take(peer.recvs_waiting, p, e));
      break;
    case P2PEventType::send_ready:
      read_from_sender(p, e);
      break;
    case P2PEventType::mailbox_chunk:
      on_mailbox_chunk(p, e);
      break;
    case P2PEventType::read_done:
      complete(*take(peer.sends_being_read, p, e));
      break;
    case P2PEventType::size_mismatch: {
      auto w = take(peer.recvs_waiting, p, e);
      fail_work(*w, recv_size_mismatch(*w, e.size_mismatch.sender_nbytes));
      break;
    }
    case P2PEventType::eager_message:
      on_eager_message(p, e);
      break;
    case P2PEventType::eager_consumed:
      on_eager_consumed(p, e);
      break;
    default:
      fail("P2P protocol error in group '{}': rank {} got event type {} from rank {}",
           group_.name(), rank_, uint32_t(e.type), p);
  }
}

// One-sided put straight into the receiver's buffer, in its layout (a strided
// send buffer is gathered directly into it, a column written into a column),
// then put_done.
void P2PEngine::put_into_receiver(const std::shared_ptr<P2PWork>& w, const RecvPost& post) {
  if (w->nbytes) w->put_to(static_cast<char*>(group_.heap().peer_ptr(w->peer, size_t(post.heap_offset))), post.layout);
  push(w->peer, event(P2PEventType::put_done, *w));
  complete(*w);
}

// The receiver reads straight from my symmetric buffer and answers read_done.
void P2PEngine::offer_for_reading(const std::shared_ptr<P2PWork>& w) {
  P2PEvent e = event(P2PEventType::send_ready, *w);
  e.send_ready.heap_offset = uint64_t(w->heap_offset);
  e.send_ready.layout = w->wire;
  w->state = P2PWork::State::reading;
  peers_[size_t(w->peer)].sends_being_read.push_back(w);
  push(w->peer, e);
}

void P2PEngine::read_from_sender(int p, const P2PEvent& e) {
  auto w = take(peers_[size_t(p)].recvs_waiting, p, e);
  w->get_from(static_cast<const char*>(group_.heap().peer_ptr(p, e.send_ready.heap_offset)), e.send_ready.layout);
  push(p, event(P2PEventType::read_done, *w));
  complete(*w);
}

}  // namespace symmflow::dist
