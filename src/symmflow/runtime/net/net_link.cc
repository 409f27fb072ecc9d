#include "symmflow/runtime/net/net_link.h"

#include <fmt/format.h>

namespace symmflow::dist {

size_t net_wait(NetLink& link, NetLink::Request r, const runtime::WaitSite& site,
                runtime::LivenessCheck* liveness) {
  size_t got = 0;
  bool done = false;
  runtime::wait_poll([&] { return done || (done = link.test(r, &got)); }, site, liveness,
                     [&] { return fmt::format("a message over {} has not completed", link.describe()); });
  return got;
}

void net_wait_all(NetLink& link, std::vector<NetLink::Request>& rs, const runtime::WaitSite& site,
                  runtime::LivenessCheck* liveness) {
  size_t left = rs.size();
  std::vector<bool> done(rs.size(), false);
  runtime::wait_poll(
      [&] {
        for (size_t i = 0; i < rs.size(); ++i)
          if (!done[i] && link.test(rs[i])) {
            done[i] = true;
            --left;
          }
        return left == 0;
      },
      site, liveness,
      [&] { return fmt::format("{} of {} messages over {} have not completed", left, rs.size(),
                               link.describe()); });
  rs.clear();
}

}  // namespace symmflow::dist
