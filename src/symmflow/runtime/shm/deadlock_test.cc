// Deadlock detection (deadlock.h) at 2, 3 and 4 ranks: every rank of a
// deadlocked job fails within about a second with the same report, naming
// each rank's pending op; a slow but correct program is not reported.
// (The .sf location in the report: tests/run_cli_test.cc.)
#include "symmflow/runtime/shm/deadlock.h"

#include <unistd.h>

#include <chrono>
#include <string>

#include "symmflow/core/error.h"
#include "symmflow/runtime/collectives/collectives.h"
#include "symmflow/runtime/p2p/p2p.h"
#include "symmflow/runtime/symm.h"
#include "symmflow/runtime/test_util.h"
#include "symmflow/runtime/world.h"

namespace symmflow::dist {
namespace {

using Clock = std::chrono::steady_clock;
using runtime::testing::run_job;

// Detection may take kDeadlockGrace plus a liveness period to publish and one
// to look; the bound leaves room for a machine shared with builds.
constexpr double kReportWithinS = 2.0;

// Runs `deadlock` on every rank (the job's deadline is 30 s): each rank must
// throw DeadlockError within kReportWithinS, with a report that names every
// rank and contains `expected`; the rank then exits 0.
void expect_deadlock_reported(int nproc, const std::function<void(ProcessGroup&)>& deadlock,
                              const std::string& expected) {
  auto r = run_job(nproc, [&] {
    init();
    auto& g = world();
    const auto t0 = Clock::now();
    try {
      deadlock(g);
    } catch (const DeadlockError& e) {
      const double s = std::chrono::duration<double>(Clock::now() - t0).count();
      const std::string msg = e.what();
      SF_CHECK(s < kReportWithinS, "rank {}: the deadlock took {:.2f} s to report", g.rank(), s);
      SF_CHECK(msg.find(expected) != std::string::npos, "rank {}: expected '{}' in: {}", g.rank(),
               expected, msg);
      for (int p = 0; p < g.size(); ++p)
        SF_CHECK(msg.find(fmt::format("rank {}: ", p)) != std::string::npos,
                 "rank {}: the report does not name rank {}: {}", g.rank(), p, msg);
      std::printf("rank %d reported after %.2f s: %s\n", g.rank(), s, e.what());
      return 0;
    }
    fail("rank {}: the deadlock was not reported", g.rank());
  });
  SF_EXPECT_JOB_OK(r);
}

class Deadlock : public ::testing::TestWithParam<int> {};

TEST_P(Deadlock, EveryRankReceivingFirstIsReportedOnEveryRank) {
  expect_deadlock_reported(GetParam(), [](ProcessGroup& g) {
    const int W = g.size(), me = g.rank();
    auto y = symm::empty({256}, DType::f32, g);
    irecv(g, y, (me + 1) % W, /*tag=*/0).wait();  // nobody sends before receiving
  }, "irecv tag 0 sequence 1");
}

TEST_P(Deadlock, CollectiveOnASubgroupThatOneRankSkipsIsReported) {
  expect_deadlock_reported(GetParam(), [](ProcessGroup& g) {
    std::vector<int> all(size_t(g.size()));
    for (int r = 0; r < g.size(); ++r) all[size_t(r)] = r;
    ProcessGroup* sub = new_group(all, "sub");
    auto x = symm::empty({1024}, DType::f32, *sub);
    if (g.rank() != g.size() - 1) all_reduce_(*sub, x, ReduceOp::sum);  // the last rank skips it
    g.barrier("after the all_reduce");
  }, "barrier after the all_reduce");
}

TEST_P(Deadlock, SendAndReceiveWithDifferentTagsAreReported) {
  // 64 KiB: above the eager limit, so the send waits for its receive post.
  expect_deadlock_reported(GetParam(), [](ProcessGroup& g) {
    const int W = g.size(), me = g.rank();
    auto x = symm::empty({16384}, DType::f32, g), y = symm::empty({16384}, DType::f32, g);
    auto works = batch_isend_irecv(g, {P2POp::send(x, (me + 1) % W, /*tag=*/1),
                                       P2POp::recv(y, (me - 1 + W) % W, /*tag=*/2)});
    for (auto& w : works) w.wait();
  }, "isend tag 1 sequence 1");
}

TEST_P(Deadlock, SlowButCorrectSenderIsNotReported) {
  auto r = run_job(GetParam(), [] {
    init();
    auto& g = world();
    const int W = g.size(), me = g.rank();
    auto x = symm::empty({16384}, DType::f32, g), y = symm::empty({16384}, DType::f32, g);
    Work recv = irecv(g, y, (me - 1 + W) % W);
    if (me == 0) sleep(2);  // computing, not blocked: everyone else waits for it
    isend(g, x, (me + 1) % W).wait();
    recv.wait();
    all_reduce_(g, x, ReduceOp::sum);
    if (me == W - 1) sleep(2);  // now the others wait for it in a barrier
    g.barrier("after the sleep");
    return 0;
  });
  SF_EXPECT_JOB_OK(r);
}

INSTANTIATE_TEST_SUITE_P(Ranks, Deadlock, ::testing::Values(2, 3, 4),
                         [](const auto& info) { return std::to_string(info.param) + "ranks"; });

}  // namespace
}  // namespace symmflow::dist
