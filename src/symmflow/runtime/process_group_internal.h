// The internals of a ProcessGroup, for the runtime's own layers (collectives,
// P2P, transports, their tests); never included by symmflow/symmflow.h.
//
//   auto& st  = detail::GroupAccess::extension<CollState>(g);  // per-group state
//   auto& seg = detail::GroupAccess::segment(g.node_group());  // this node's segment
//   runtime::wait_slow(ready, wake, site, detail::GroupAccess::liveness(g), state);
//   if (NetLink* net = detail::GroupAccess::net(g)) ...        // members on other nodes
//
// It also makes the transport types complete (GroupSegment, SignalPad,
// LivenessCheck, NetLink), so runtime code includes this instead of the
// pieces one by one.
#pragma once
#include <memory>
#include <typeindex>

#include "symmflow/runtime/net/net_link.h"
#include "symmflow/runtime/process_group.h"
#include "symmflow/runtime/shm/group_segment.h"
#include "symmflow/runtime/shm/signal_pad.h"
#include "symmflow/runtime/shm/wait.h"
#include "symmflow/runtime/symmetric_heap.h"

namespace symmflow::dist {

// The runtime::LivenessCheck of a group: the abort flag and its members'
// liveness (ProcessGroup::check), and deadlock detection through the
// backend's detector (a blocked wait of this group depends on its members).
struct ProcessGroup::Liveness final : runtime::LivenessCheck {
  explicit Liveness(ProcessGroup& group) : g(group) {}
  void check(const runtime::WaitSite& site) override { g.check(site); }
  void still_blocked(const runtime::WaitSite& site, bool first, uint64_t epoch,
                     runtime::FnRef<std::string()> describe) override;
  void unblocked() override;
  ProcessGroup& g;
};

namespace detail {

struct GroupAccess {
  // Per-group state of a layer built on top (collectives' workspace, P2P
  // engine): created on first use with T(g), destroyed with the group, before
  // its heap. Not thread-safe: one thread drives a group.
  template <class T>
  static T& extension(ProcessGroup& g) {
    auto& slot = g.extensions_[std::type_index(typeid(T))];
    if (!slot) slot = std::make_shared<T>(g);
    return *std::static_pointer_cast<T>(slot);
  }
  // This node's segment of the group (indexed by ProcessGroup::local_index).
  static runtime::GroupSegment& segment(ProcessGroup& g) { return *g.seg_; }
  // What wait_slow()/wait_poll() take to notice an aborted job or a dead member.
  static runtime::LivenessCheck* liveness(ProcessGroup& g) { return g.liveness_.get(); }
  // The link to the members on other nodes; nullptr when the group is on one node.
  static NetLink* net(const ProcessGroup& g) { return g.net_.get(); }
};

}  // namespace detail
}  // namespace symmflow::dist
