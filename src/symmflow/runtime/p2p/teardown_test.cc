// A send that no receive matched is an error when the rank leaves
// (dist::shutdown), naming the op, the peer, the tag, the bytes and the rank:
// an eager send completes its Work at once, so without this check a missing
// receive would pass silently.
#include <string>

#include "symmflow/core/error.h"
#include "symmflow/runtime/p2p/p2p.h"
#include "symmflow/runtime/symm.h"
#include "symmflow/runtime/test_util.h"
#include "symmflow/runtime/world.h"

namespace symmflow::dist {
namespace {

using runtime::testing::run_job;

TEST(P2PTeardown, EagerSendThatNobodyReceivesFailsTheReceiverAtShutdown) {
  auto r = run_job(2, [] {
    init();
    auto& g = world();
    auto x = symm::empty({4}, DType::f32, g);
    if (g.rank() == 0) isend(g, x, 1, /*tag=*/5).wait();  // 16 bytes: eager, complete at once
    g.barrier("after the send");
    return 0;
  });
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_NE(r.err.find("dist::shutdown: rank 1 leaves with sends that no receive matched: group "
                       "'world': rank 0's isend tag 5 sequence 1 (16 bytes) to rank 1 was never "
                       "received"), std::string::npos) << r.err;
  runtime::testing::expect_clean(r);
}

TEST(P2PTeardown, RendezvousSendStillWaitingFailsTheSenderAtShutdown) {
  for (int nproc : {2, 3}) {
    auto r = run_job(nproc, [] {
      init();
      auto& g = world();
      auto x = symm::empty({16384}, DType::f32, g);  // 64 KiB: waits for a receive post
      Work w;
      if (g.rank() == 0) w = isend(g, x, g.size() - 1, /*tag=*/3);
      g.barrier("after the send");
      return 0;
    });
    EXPECT_EQ(r.rc, 1) << r.err;
    EXPECT_NE(r.err.find(fmt::format("dist::shutdown: rank 0 leaves with sends that no receive matched: "
                                     "group 'world': isend to rank {} tag 3 sequence 1 (65536 bytes) on "
                                     "rank 0 has no matching receive", nproc - 1)), std::string::npos)
        << r.err;
    runtime::testing::expect_clean(r);
  }
}

TEST(P2PTeardown, MatchedSendsLeaveCleanly) {
  auto r = run_job(3, [] {
    init();
    auto& g = world();
    const int W = g.size(), me = g.rank();
    auto x = symm::empty({4}, DType::f32, g), y = symm::empty({4}, DType::f32, g);
    isend(g, x, (me + 1) % W, 5).wait();  // eager: may arrive before its receive
    g.barrier("between the send and the receive");
    irecv(g, y, (me - 1 + W) % W, 5).wait();
    return 0;
  });
  SF_EXPECT_JOB_OK(r);
}

}  // namespace
}  // namespace symmflow::dist
