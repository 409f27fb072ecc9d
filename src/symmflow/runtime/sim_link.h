// Simulated link (docs/runtime.md "Simulated link"). On one machine the ranks
// share memory and cores: a transfer costs little more than a memcpy, so the
// overlap of communication with compute cannot be measured. With
// SYMMFLOW_SIM_LINK_LATENCY_US and/or SYMMFLOW_SIM_LINK_GBPS set (`symmflow run
// --sim-link-latency-us X --sim-link-gbps Y`), every communication operation on
// a link completes no earlier than
//
//   t_link + bytes_on_link / bandwidth + latency
//
// bytes_on_link: what one rank puts on the link under a ring algorithm
// (link_bytes below). The link is full duplex and carries one transfer at a
// time each way: t_link is when this rank started the op, or later, when the
// op before it in the same direction has finished passing its bytes (receives
// go one way, sends and collectives the other), so two transfers in flight
// share the bandwidth rather than each getting all of it; latency overlaps. The data moves as fast as
// ever; only completion is held back, by wrapping the op's Work: test() is
// inner.test() && now >= ready, block() is inner.block() then a sleep until
// ready (never a spin: ranks share cores). The blocking forms wait on the same
// wrapped Work, so they pay the same. A self-send/receive and a group of one
// rank have no link: no delay. Off (the default), no clock is read and no
// Work is wrapped.
//
//   LinkDelay d(g, LinkPattern::all_reduce, t.nbytes());   // the op starts now
//   Work w(d.wrap(start_all_reduce(...)));
#pragma once
#include <chrono>
#include <cstddef>
#include <memory>

#include "symmflow/runtime/process_group.h"
#include "symmflow/runtime/work.h"

namespace symmflow::dist::detail {

struct SimLink {
  bool on = false;
  double latency_s = 0;
  double bytes_per_s = 0;  // 0: infinite
};

// The settings read by the last dist::init() (each init sees the environment
// of its moment, as params do); off before any init.
extern SimLink g_sim_link;
void load_sim_link();

// What one rank puts on the link for an operation over n bytes in a group of W
// ranks, under a ring algorithm:
//   whole       n                (P2P, broadcast, tile_reduce)
//   all_reduce  2(W-1)/W * n     (reduce-scatter then all-gather)
//   ring_share  (W-1)/W * n      (all_gather, reduce_scatter, all_to_all_single;
//                                 n is the larger tensor: gathered / full)
enum class LinkPattern { whole, all_reduce, ring_share };
// Which way a P2P op's bytes go (collectives send as much as they receive: out).
enum class LinkDirection { out, in };
double link_bytes(LinkPattern p, size_t n, int W);

// The link time of one operation, started at construction.
class LinkDelay {
 public:
  // on_link false: a self-send/receive. `bytes`: the tensor's.
  LinkDelay(bool on_link, size_t bytes, LinkDirection d = LinkDirection::out) {
    if (g_sim_link.on && on_link) [[unlikely]] arm(double(bytes), d);
  }
  // A collective of g over n bytes (a group of one rank has no link).
  LinkDelay(const ProcessGroup& g, LinkPattern p, size_t n) {
    if (g_sim_link.on && g.size() > 1) [[unlikely]] arm(link_bytes(p, n, g.size()), LinkDirection::out);
  }
  // `w` itself when off or without a link; else a Work that completes no
  // earlier than start + latency + bytes / bandwidth.
  std::shared_ptr<WorkImpl> wrap(std::shared_ptr<WorkImpl> w) const {
    if (!armed_) return w;
    return wrap_armed(std::move(w));
  }

 private:
  void arm(double bytes, LinkDirection d);
  std::shared_ptr<WorkImpl> wrap_armed(std::shared_ptr<WorkImpl> w) const;
  bool armed_ = false;
  std::chrono::steady_clock::time_point ready_;
};

}  // namespace symmflow::dist::detail
