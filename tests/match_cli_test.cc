// Matched before run (exec/comm_match.h), as a user sees it: a program whose
// ranks' sends, receives or collectives do not match fails on every rank
// before anything runs — exit 2, within a second, naming both ranks and both
// ops with file:line:col — at 2 and 3 ranks, eager and compiled alike.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "cli_util.h"

namespace {

std::string program(const std::string& name) { return std::string(SF_SOURCE_DIR) + "/tests/match/" + name + ".sf"; }

struct Failure {
  int rc;
  std::string out;
  double seconds;
};

Failure run(const std::string& name, int nproc, const std::string& mode) {
  const auto t0 = std::chrono::steady_clock::now();
  auto r = sf_test::run("run " + program(name) + " --nproc " + std::to_string(nproc) + " --mode " + mode +
                        " --timeout 30");
  return {r.rc, r.out, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()};
}

// Every rank prints the same error: one line per rank.
int ranks_reporting(const std::string& out) {
  int n = 0;
  for (size_t at = 0; (at = out.find("communication does not match across ranks", at)) != std::string::npos; ++at) ++n;
  return n;
}

class MatchCli : public testing::TestWithParam<int> {};

TEST_P(MatchCli, AnUnmatchedSendFailsEveryRankNamingBothSides) {
  const int w = GetParam();
  for (const char* mode : {"eager", "compiled"}) {
    auto f = run("unmatched_send", w, mode);
    EXPECT_EQ(f.rc, 2) << f.out;
    EXPECT_EQ(ranks_reporting(f.out), w) << f.out;
    EXPECT_NE(f.out.find("rank 0's send #1 (send to rank 1 (tag 0, f32, 16 bytes) at " + program("unmatched_send") +
                         ":5:"),
              std::string::npos)
        << f.out;
    EXPECT_NE(f.out.find("has no matching receive on rank 1 (rank 1 receives nothing from rank 0 with tag 0)"),
              std::string::npos)
        << f.out;
    EXPECT_LT(f.seconds, 3.0) << "it must fail at once, not at a timeout";
  }
}

TEST_P(MatchCli, ASizeMismatchNamesTheSendAndTheReceive) {
  auto f = run("size_mismatch", GetParam(), "compiled");
  EXPECT_EQ(f.rc, 2) << f.out;
  const std::string at = program("size_mismatch") + ":4:";
  EXPECT_NE(f.out.find("rank 0's send #1 (send to rank 1 (tag 0, f32, 16 bytes) at " + at), std::string::npos) << f.out;
  EXPECT_NE(f.out.find("is received by rank 1's receive from rank 0 (tag 0, f32, 32 bytes) at " + at),
            std::string::npos)
      << f.out;
  EXPECT_NE(f.out.find("the sizes differ"), std::string::npos) << f.out;
}

TEST_P(MatchCli, ADifferentTagIsNoMatch) {
  auto f = run("tag_mismatch", GetParam(), "eager");
  EXPECT_EQ(f.rc, 2) << f.out;
  EXPECT_NE(f.out.find("rank 0's send #1 (send to rank 1 (tag 1"), std::string::npos) << f.out;
}

TEST_P(MatchCli, RanksIssuingDifferentCollectivesFailBeforeTheFirst) {
  auto f = run("collective_mismatch", GetParam(), "compiled");
  EXPECT_EQ(f.rc, 2) << f.out;
  const std::string at = program("collective_mismatch") + ":5:";
  EXPECT_NE(f.out.find("collective #1 on group 'world' differs: rank 0 issues c10d::all_reduce_ (f32, 4 bytes) at " + at),
            std::string::npos)
      << f.out;
  EXPECT_NE(f.out.find("rank 1 issues c10d::all_reduce_ (f32, 8 bytes) at " + at), std::string::npos) << f.out;
  EXPECT_EQ(ranks_reporting(f.out), GetParam()) << f.out;
}

INSTANTIATE_TEST_SUITE_P(Ranks, MatchCli, testing::Values(2, 3),
                         [](const testing::TestParamInfo<int>& i) { return std::to_string(i.param) + "ranks"; });

}  // namespace
