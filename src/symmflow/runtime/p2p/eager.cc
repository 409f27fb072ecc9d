// Eager sends (engine.h, channel.h): a message of at most kEagerMaxBytes to a
// peer on this node whose receive post has not arrived yet is copied (packed,
// when strided) into one of the pair's kEagerSlots slots and announced with an
// eager_message event, without waiting for the post. The receiver matches it
// with its receive of the same (tag, sequence) - posted before or after it
// arrived - copies it out and frees the slot with eager_consumed, which also
// completes the send (carrying the receiver's size, so that a size mismatch
// fails both sides as on the rendezvous paths).
//
// Copies: the copy into the slot and the copy out of it are two real copies,
// counted in copy_stats.h like the mailbox's. What they buy: the data leaves
// at isend, before the receiver has posted, so a receive posted later finds
// it there and completes at once instead of starting a post -> put round trip
// (and a small send to a regular buffer costs the same two copies as the
// mailbox, with one event instead of a post, a chunk event and a drain). When
// the post is already there the sender prefers rendezvous (post_send consumes
// the ring first): a put into a symmetric buffer copies once.
//
// Never blocking: when every slot of the pair is in use the send falls back
// to rendezvous (it waits for the post like a large message). Slots are freed
// only by the receiver's matching receive, so an eager message whose receive
// is never posted holds its slot; the send then never completes, as a
// rendezvous send would not either.
#include "symmflow/core/error.h"
#include "symmflow/runtime/copy_stats.h"
#include "symmflow/runtime/p2p/engine.h"

namespace symmflow::dist {

using runtime::P2PEvent;
using runtime::P2PEventType;

bool P2PEngine::try_send_eager(const std::shared_ptr<P2PWork>& w) {
  if (w->nbytes > eager_max_bytes_) return false;
  PeerState& peer = peers_[size_t(w->peer)];
  if (peer.eager_slots_in_use == runtime::kEagerSlots) return false;  // rendezvous
  int slot = 0;
  while (peer.eager_slot_sends[size_t(slot)]) ++slot;
  copy_all(w->layout, w->nbytes, pair(rank_, w->peer).eager[slot], CopyDirection::tensor_to_buffer);
  if (w->nbytes) count_staged_copy(w->nbytes);  // the copy into the slot
  peer.eager_slot_sends[size_t(slot)] = w;
  ++peer.eager_slots_in_use;
  w->state = P2PWork::State::eager;
  P2PEvent e = event(P2PEventType::eager_message, *w);
  e.eager_message.nbytes = w->nbytes;
  e.eager_message.slot = uint64_t(slot);
  push(w->peer, e);
  return true;
}

// Whether the message `key` to `peer` sits in one of my eager slots (a receive
// post for it crossed it on the way and is dropped).
bool P2PEngine::crossed_eager_message(int p, MessageKey key) const {
  const PeerState& peer = peers_[size_t(p)];
  if (peer.eager_slots_in_use == 0) return false;
  for (const auto& w : peer.eager_slot_sends)
    if (w && w->key() == key) return true;
  return false;
}

void P2PEngine::on_eager_message(int p, const P2PEvent& e) {
  PeerState& peer = peers_[size_t(p)];
  const MessageKey key{e.tag, e.tag_seq};
  const EagerArrival arrival{e.eager_message.nbytes, e.eager_message.slot};
  auto it = peer.recvs_waiting.find(key);
  if (it == peer.recvs_waiting.end()) {  // not posted yet: post_recv takes it
    peer.eager_unmatched.emplace(key, arrival);
    return;
  }
  auto w = std::move(it->second);
  peer.recvs_waiting.erase(it);
  deliver_eager(p, *w, arrival);
}

void P2PEngine::deliver_eager(int p, P2PWork& w, const EagerArrival& arrival) {
  const bool sizes_match = arrival.nbytes == w.nbytes;
  if (sizes_match) {
    copy_all(w.layout, w.nbytes, pair(p, rank_).eager[arrival.slot], CopyDirection::buffer_to_tensor);
    if (w.nbytes) count_staged_copy(w.nbytes);  // the copy out of the slot
  }
  P2PEvent e = event(P2PEventType::eager_consumed, w);
  e.eager_consumed.slot = arrival.slot;
  e.eager_consumed.receiver_nbytes = w.nbytes;
  push(p, e);
  if (sizes_match) complete(w);
  else fail_work(w, recv_size_mismatch(w, arrival.nbytes));
}

void P2PEngine::on_eager_consumed(int p, const P2PEvent& e) {
  PeerState& peer = peers_[size_t(p)];
  const uint64_t slot = e.eager_consumed.slot;
  SF_CHECK(slot < uint64_t(runtime::kEagerSlots) && peer.eager_slot_sends[slot] &&
               peer.eager_slot_sends[slot]->key() == (MessageKey{e.tag, e.tag_seq}),
           "P2P protocol error in group '{}': rank {} got eager_consumed for slot {} (tag {}, "
           "sequence {}) from rank {}, which is not that message's slot",
           group_.name(), rank_, slot, e.tag, e.tag_seq, p);
  auto w = std::move(peer.eager_slot_sends[slot]);
  --peer.eager_slots_in_use;
  if (e.eager_consumed.receiver_nbytes != w->nbytes)
    fail_work(*w, send_size_mismatch(*w, e.eager_consumed.receiver_nbytes));
  else
    complete(*w);
}

}  // namespace symmflow::dist
