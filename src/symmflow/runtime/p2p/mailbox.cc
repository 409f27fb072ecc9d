// Staged transfers through the pair's mailbox (engine.h, channel.h), for a
// message whose receive buffer is not symmetric and whose send buffer is not
// either: the sender copies it chunk by chunk into kMailboxSlots slots of
// kMailboxChunk bytes, the receiver copies each chunk out and counts it in
// `drained`. Both copies are counted in copy_stats.h (one per side per message).
#include <algorithm>

#include "symmflow/runtime/copy_stats.h"
#include "symmflow/runtime/p2p/engine.h"

namespace symmflow::dist {

using runtime::P2PEvent;
using runtime::P2PEventType;

void P2PEngine::drive_staged(int p) {
  PeerState& peer = peers_[size_t(p)];
  runtime::P2PPairBlock& block = *peer.out;
  while (!peer.staged_sends.empty()) {
    const uint64_t drained = block.drained.load(std::memory_order_acquire);
    if (peer.mailbox_chunks_filled - drained >= uint64_t(runtime::kMailboxSlots)) return;
    auto& w = peer.staged_sends.front().first;
    const size_t chunk_bytes = runtime::kMailboxChunk / w->itemsize * w->itemsize;
    const size_t length = std::min(chunk_bytes, w->nbytes - peer.staged_bytes_sent);
    const uint64_t slot = peer.mailbox_chunks_filled % runtime::kMailboxSlots;
    w->pack(peer.staged_bytes_sent / w->itemsize, length / w->itemsize, block.mailbox[slot]);
    P2PEvent e = event(P2PEventType::mailbox_chunk, *w);
    e.mailbox_chunk.message_offset = peer.staged_bytes_sent;
    e.mailbox_chunk.length = length;
    e.mailbox_chunk.slot = slot;
    ++peer.mailbox_chunks_filled;
    peer.staged_bytes_sent += length;
    w->bytes_transferred = peer.staged_bytes_sent;
    push(p, e);
    if (peer.staged_bytes_sent == w->nbytes) {
      count_staged_copy_for(w->staging_owner, w->nbytes);  // the copy into the mailbox
      complete(*w);
      peer.staged_sends.pop_front();
      peer.staged_bytes_sent = 0;
    }
  }
}

void P2PEngine::on_mailbox_chunk(int p, const P2PEvent& e) {
  PeerState& peer = peers_[size_t(p)];
  const MessageKey key{e.tag, e.tag_seq};
  P2PWork* found = nullptr;
  for (auto& r : peer.recvs_waiting)
    if (r->key() == key) found = r.get();
  if (!found) take(peer.recvs_waiting, p, e);  // throws
  P2PWork& w = *found;
  const auto& chunk = e.mailbox_chunk;
  w.unpack(peer.in->mailbox[chunk.slot], chunk.message_offset / w.itemsize, chunk.length / w.itemsize);
  peer.in->drained.store(++peer.mailbox_chunks_drained, std::memory_order_release);
  peer.notify_due = true;
  w.bytes_transferred += chunk.length;
  w.state = P2PWork::State::staged;
  if (w.bytes_transferred == w.nbytes) {
    count_staged_copy_for(w.staging_owner, w.nbytes);  // the copy out of the mailbox
    complete(*take(peer.recvs_waiting, p, e));
  }
}

}  // namespace symmflow::dist
