// What a pending P2P operation waits for (engine.h), in words: the state part
// of timeout and peer-failure messages ("send of 256 bytes: rank 1 has posted
// no matching receive") and the whole timeout message of wait().
#include "symmflow/core/error.h"
#include "symmflow/runtime/p2p/engine.h"

namespace symmflow::dist {

std::string P2PEngine::describe(const P2PWork& w) const {
  const int p = w.peer;
  if (w.state == P2PWork::State::net)
    return fmt::format("{} of {} bytes over {} to/from rank {} (another node) has not completed",
                       w.kind == P2POp::Kind::send ? "send" : "receive", w.nbytes,
                       detail::GroupAccess::net(group_)->describe(), p);
  if (w.kind == P2POp::Kind::recv) {
    if (w.bytes_transferred == 0)
      return fmt::format("receive of {} bytes posted (tag {} sequence {} to rank {}), no matching "
                         "send has arrived from rank {}", w.nbytes, w.tag, w.tag_seq, p, p);
    return fmt::format("staged receive: {} of {} bytes arrived", w.bytes_transferred, w.nbytes);
  }
  switch (w.state) {
    case P2PWork::State::queued:
      return fmt::format("send of {} bytes: rank {} has posted no matching receive", w.nbytes, p);
    case P2PWork::State::reading:
      return fmt::format("send of {} bytes: waiting for rank {} to read it from the symmetric "
                         "buffer", w.nbytes, p);
    default:
      return fmt::format("staged send: {} of {} bytes in the mailbox, waiting for rank {} to "
                         "drain it", w.bytes_transferred, w.nbytes, p);
  }
}

std::string P2PEngine::unmatched_sends() {
  progress();  // an eager message that arrived last still counts
  std::string out;
  for (size_t p = 0; p < peers_.size(); ++p) {
    const PeerState& peer = peers_[p];
    for (const auto& w : peer.sends_waiting)
      out += fmt::format("; isend to rank {} tag {} sequence {} ({} bytes) on rank {} has no matching "
                         "receive", p, w->tag, w->tag_seq, w->nbytes, rank_);
    for (const auto& e : peer.eager_unmatched)
      out += fmt::format("; rank {}'s isend tag {} sequence {} ({} bytes) to rank {} was never received",
                         p, e.key.tag, e.key.tag_seq, e.nbytes, rank_);
  }
  return out.empty() ? out : out.substr(2);
}

std::string P2PEngine::timeout_message(const P2PWork& w, double timeout_s, std::string_view what) const {
  return fmt::format(
      "timeout after {:.3g} s in {} {}: group '{}', rank {} waiting for rank {}: {} "
      "(raise SYMMFLOW_TIMEOUT or dist::set_timeout() if the peer is just slow)",
      timeout_s, w.op(), what, group_.name(), rank_, w.peer, describe(w));
}

}  // namespace symmflow::dist
