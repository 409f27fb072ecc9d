// The simulated link's settings and its Work wrapper (sim_link.h).
#include "symmflow/runtime/sim_link.h"

#include <thread>
#include <utility>

#include "symmflow/core/params.h"

namespace symmflow::dist::detail {

SimLink g_sim_link;

void load_sim_link() {
  SimLink s;
  s.latency_s = params::number("SYMMFLOW_SIM_LINK_LATENCY_US") * 1e-6;
  s.bytes_per_s = params::number("SYMMFLOW_SIM_LINK_GBPS") * 1e9 / 8;
  s.on = s.latency_s > 0 || s.bytes_per_s > 0;
  g_sim_link = s;
}

double link_bytes(LinkPattern p, size_t n, int W) {
  const double b = double(n);
  switch (p) {
    case LinkPattern::whole: return b;
    case LinkPattern::all_reduce: return 2.0 * (W - 1) / W * b;
    case LinkPattern::ring_share: return double(W - 1) / W * b;
  }
  return b;
}

namespace {
// When each direction of this rank's link has passed the bytes given to it so far.
std::chrono::steady_clock::time_point g_link_free[2];

std::chrono::steady_clock::duration seconds(double s) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(s));
}
}  // namespace

void LinkDelay::arm(double bytes, LinkDirection d) {
  auto& free = g_link_free[d == LinkDirection::in ? 1 : 0];
  const auto now = std::chrono::steady_clock::now();
  const auto begin = free > now ? free : now;
  free = begin + seconds(g_sim_link.bytes_per_s > 0 ? bytes / g_sim_link.bytes_per_s : 0.0);
  armed_ = true;
  ready_ = free + seconds(g_sim_link.latency_s);
}

namespace {

// The op itself, held back until `ready`. An op that failed reports at once:
// the delay models a slow link, not a slow failure.
class LinkWork final : public WorkImpl {
 public:
  LinkWork(std::shared_ptr<WorkImpl> inner, std::chrono::steady_clock::time_point ready)
      : inner_(std::move(inner)), ready_(ready) {}
  bool test() override {
    if (!inner_->test()) return false;
    error = inner_->error;
    return error || std::chrono::steady_clock::now() >= ready_;
  }
  void block() override {
    inner_->block();
    error = inner_->error;
    if (!error) std::this_thread::sleep_until(ready_);
  }

 private:
  std::shared_ptr<WorkImpl> inner_;
  std::chrono::steady_clock::time_point ready_;
};

}  // namespace

std::shared_ptr<WorkImpl> LinkDelay::wrap_armed(std::shared_ptr<WorkImpl> w) const {
  if (!w) return w;
  return std::make_shared<LinkWork>(std::move(w), ready_);
}

}  // namespace symmflow::dist::detail
