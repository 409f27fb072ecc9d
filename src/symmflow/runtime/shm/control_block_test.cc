// failure_summary: what the launcher prints when ranks fail, once per distinct
// error. A rank the abort caught on its way (slow, still in an earlier
// collective when a peer failed) is named as stopped by that failure, not
// given the failing rank's message a second time.
#include "symmflow/runtime/shm/control_block.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace symmflow::runtime {
namespace {

constexpr const char* kError =
    "c10d::all_reduce at f.sf:4:8: dist::group: no group named 'tp' (groups are made by dist::new_group)";

std::unique_ptr<ControlBlock> block(int world) {
  auto cb = std::make_unique<ControlBlock>();
  cb->world_size = world;
  for (int r = 0; r < world; ++r) cb->failure_len[r].store(0);
  return cb;
}

std::string stopped_by(int k, const std::string& message) {
  return "peer failure in wait_signal all_gather: group 'world', rank 2 waiting for rank 3: job aborted: rank " +
         std::to_string(k) + " failed: " + message;
}

TEST(FailureSummary, SameErrorOnEveryRankIsOneLine) {
  auto cb = block(3);
  for (int r = 0; r < 3; ++r) record_failure(cb.get(), r, kError);
  EXPECT_EQ(failure_summary(cb.get()), std::string("all 3 ranks: ") + kError + "\n");
}

TEST(FailureSummary, RankCaughtByTheAbortIsNamedWithoutRepeatingTheError) {
  auto cb = block(4);
  for (int r : {0, 1, 3}) record_failure(cb.get(), r, kError);
  record_failure(cb.get(), 2, stopped_by(0, kError));
  EXPECT_EQ(failure_summary(cb.get()),
            std::string("ranks 0, 1, 3: ") + kError +
                "\nrank 2: stopped when rank 0 failed (wait_signal all_gather: group 'world', rank 2 "
                "waiting for rank 3)\n");
}

TEST(FailureSummary, AbortReasonCutShortStillMatchesItsRank) {
  auto cb = block(2);
  record_failure(cb.get(), 0, kError);
  record_failure(cb.get(), 1, stopped_by(0, std::string(kError).substr(0, 40)));
  EXPECT_NE(failure_summary(cb.get()).find("rank 1: stopped when rank 0 failed"), std::string::npos)
      << failure_summary(cb.get());
}

TEST(FailureSummary, PeerFailureWithoutTheCausesOwnMessageIsPrintedWhole) {
  // The failing rank was killed before it recorded anything: the PeerFailure
  // is all the user gets, so it stays whole.
  auto cb = block(2);
  const std::string whole = stopped_by(0, "exit code 9");
  record_failure(cb.get(), 1, whole);
  EXPECT_EQ(failure_summary(cb.get()), "rank 1: " + whole + "\n");
}

TEST(FailureSummary, PeerFailureNamingAnotherErrorIsNotFolded) {
  auto cb = block(2);
  record_failure(cb.get(), 0, kError);
  const std::string other = stopped_by(0, "aten::div at f.sf:5:8: integer division by zero");
  record_failure(cb.get(), 1, other);
  EXPECT_EQ(failure_summary(cb.get()), std::string("rank 0: ") + kError + "\nrank 1: " + other + "\n");
}

}  // namespace
}  // namespace symmflow::runtime
