// Peers on another node (engine.h): the message goes over the group's NetLink
// as is (contiguous) or through a packed copy (counted in copy_stats.h),
// matched by MPI per tag in program order. Network requests move only when
// polled (poll_net, from progress() and the wait loop).
#include "symmflow/core/error.h"
#include "symmflow/runtime/copy_stats.h"
#include "symmflow/runtime/p2p/engine.h"

namespace symmflow::dist {

void P2PEngine::post_net(const std::shared_ptr<P2PWork>& w) {
  NetLink& net = *detail::GroupAccess::net(group_);
  const bool direct = w->contiguous || w->nbytes == 0;
  char* buffer = direct ? w->data : nullptr;
  if (!direct) {
    w->packed.resize(w->nbytes);
    buffer = w->packed.data();
    if (w->kind == P2POp::Kind::send) {
      w->pack_all(buffer);
      count_staged_copy_for(w->staging_owner, w->nbytes);
    }
  }
  w->net_request = w->kind == P2POp::Kind::send
                       ? net.isend(buffer, w->nbytes, w->peer, w->tag, NetLink::Lane::p2p)
                       : net.irecv(buffer, w->nbytes, w->peer, w->tag, NetLink::Lane::p2p);
  w->state = P2PWork::State::net;
  net_pending_.push_back(w);
}

bool P2PEngine::poll_net() {
  NetLink& net = *detail::GroupAccess::net(group_);
  bool any = false;
  for (size_t i = 0; i < net_pending_.size();) {
    auto& w = net_pending_[i];
    size_t received = 0;
    if (!net.test(w->net_request, &received)) {
      ++i;
      continue;
    }
    any = true;
    if (w->kind == P2POp::Kind::recv && received != w->nbytes) {
      fail_work(*w, fmt::format(
          "irecv size mismatch in group '{}': rank {} receives {} bytes ({}) from rank {} with "
          "tag {} (sequence {}), but rank {} sent {} bytes",
          group_.name(), rank_, w->nbytes, w->tensor.type_string(), w->peer, w->tag, w->tag_seq,
          w->peer, received));
    } else {
      if (w->kind == P2POp::Kind::recv && !w->packed.empty()) {
        w->unpack_all(w->packed.data());
        count_staged_copy_for(w->staging_owner, w->nbytes);
      }
      w->bytes_transferred = w->nbytes;
      complete(*w);
    }
    w->packed = {};
    net_pending_[i] = net_pending_.back();
    net_pending_.pop_back();
  }
  return any;
}

}  // namespace symmflow::dist
