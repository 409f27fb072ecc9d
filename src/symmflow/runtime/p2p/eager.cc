// Eager sends (engine.h, channel.h): a message of at most kEagerMaxBytes to a
// peer on this node whose receive post has not arrived yet is copied (packed,
// when strided) into one of the pair's kEagerSlots slots and announced with an
// eager_message event, without waiting for the post. The send completes then,
// when its data is in the slot (as MPI's eager sends do: the send buffer may be
// reused at once). The receiver matches the message with its receive of the
// same (tag, sequence) - posted before or after it arrived - copies it out and
// frees the slot with eager_consumed. A size mismatch is reported by the
// receiver's Work only: the sender's completed already (p2p.h).
//
// Copies: the copy into the slot and the copy out of it are two real copies,
// counted in copy_stats.h like the mailbox's. What they buy: the data leaves
// at isend, before the receiver has posted, so a receive posted later finds
// it there and completes at once instead of starting a post -> put round trip
// (and a small send to a regular buffer costs the same two copies as the
// mailbox, with one event instead of a post, a chunk event and a drain); and
// the sender does not wait for the receiver. When the post is already there
// the sender prefers rendezvous (the caller consumes the ring before posting):
// a put into a symmetric buffer copies once.
//
// Never blocking: when every slot of the pair is in use the send falls back
// to rendezvous (it waits for the post like a large message). Slots are freed
// only by the receiver's matching receive, so eager messages whose receives
// are never posted hold their slots; later sends then wait for their posts.
#include "symmflow/core/error.h"
#include "symmflow/runtime/copy_stats.h"
#include "symmflow/runtime/p2p/engine.h"

namespace symmflow::dist {

using runtime::P2PEvent;
using runtime::P2PEventType;

bool P2PEngine::try_send_eager(const std::shared_ptr<P2PWork>& w) {
  if (w->nbytes > eager_max_bytes_ || w->rendezvous) return false;
  PeerState& peer = peers_[size_t(w->peer)];
  if (peer.eager_slots_in_use == runtime::kEagerSlots) return false;  // rendezvous
  int slot = 0;
  while (peer.eager_slots[size_t(slot)].busy) ++slot;
  w->pack_all(peer.out->eager[slot]);
  if (w->nbytes) count_staged_copy_for(w->staging_owner, w->nbytes);  // the copy into the slot
  peer.eager_slots[size_t(slot)] = {true, w->key()};
  ++peer.eager_slots_in_use;
  P2PEvent e = event(P2PEventType::eager_message, *w);
  e.eager_message.nbytes = w->nbytes;
  e.eager_message.slot = uint64_t(slot);
  push(w->peer, e);
  complete(*w);  // the data is in the slot: the send buffer is free
  return true;
}

// Whether the message `key` to `peer` sits in one of my eager slots (a receive
// post for it crossed it on the way and is dropped).
bool P2PEngine::crossed_eager_message(int p, MessageKey key) const {
  const PeerState& peer = peers_[size_t(p)];
  if (peer.eager_slots_in_use == 0) return false;
  for (const EagerSlot& s : peer.eager_slots)
    if (s.busy && s.key == key) return true;
  return false;
}

void P2PEngine::on_eager_message(int p, const P2PEvent& e) {
  PeerState& peer = peers_[size_t(p)];
  const MessageKey key{e.tag, e.tag_seq};
  auto& recvs = peer.recvs_waiting;
  for (size_t i = 0; i < recvs.size(); ++i) {
    if (recvs[i]->key() != key) continue;
    auto w = std::move(recvs[i]);
    if (i + 1 != recvs.size()) recvs[i] = std::move(recvs.back());
    recvs.pop_back();
    deliver_eager(p, *w, e.eager_message.nbytes, e.eager_message.slot);
    return;
  }
  // Not posted yet: post_recv takes it.
  peer.eager_unmatched.push_back({key, e.eager_message.nbytes, e.eager_message.slot});
}

void P2PEngine::deliver_eager(int p, P2PWork& w, uint64_t nbytes, uint64_t slot) {
  const bool sizes_match = nbytes == w.nbytes;
  if (sizes_match) {
    w.unpack_all(peers_[size_t(p)].in->eager[slot]);
    if (w.nbytes) count_staged_copy_for(w.staging_owner, w.nbytes);  // the copy out of the slot
  }
  P2PEvent e = event(P2PEventType::eager_consumed, w);
  e.eager_consumed.slot = slot;
  e.eager_consumed.receiver_nbytes = w.nbytes;
  push(p, e);
  if (sizes_match) complete(w);
  else fail_work(w, recv_size_mismatch(w, nbytes));
}

// The receiver took the message: the slot is free. (A size mismatch it
// reports in receiver_nbytes fails its receive only: the send completed.)
void P2PEngine::on_eager_consumed(int p, const P2PEvent& e) {
  PeerState& peer = peers_[size_t(p)];
  const uint64_t slot = e.eager_consumed.slot;
  SF_CHECK(slot < uint64_t(runtime::kEagerSlots) && peer.eager_slots[slot].busy &&
               peer.eager_slots[slot].key == (MessageKey{e.tag, e.tag_seq}),
           "P2P protocol error in group '{}': rank {} got eager_consumed for slot {} (tag {}, "
           "sequence {}) from rank {}, which is not that message's slot",
           group_.name(), rank_, slot, e.tag, e.tag_seq, p);
  peer.eager_slots[slot].busy = false;
  --peer.eager_slots_in_use;
}

}  // namespace symmflow::dist
