// Run-time failures as a user sees them (docs/runtime.md "Deadlocks" and
// "Errors"): a deadlocked program fails on every rank within about a second
// with one report naming each rank's pending op and its .sf location; an
// error the ranks share is printed once, with the op and the location.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "cli_util.h"

namespace {

using sf_test::Result;
using sf_test::run;

const std::string kDir = std::string(SF_SOURCE_DIR) + "/tests/deadlock/";

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class RuntimeErrorsCli : public ::testing::TestWithParam<int> {};

TEST_P(RuntimeErrorsCli, DeadlockIsReportedOnceWithEveryRanksLocation) {
  const int n = GetParam();
  const auto t0 = std::chrono::steady_clock::now();
  // The deadline stays at its default (300 s): the report must not wait for it.
  Result r = run("run " + kDir + "recv_first.sf --mode eager --nproc " + std::to_string(n),
                 "env -u SYMMFLOW_TIMEOUT");
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_LT(s, 20.0) << r.out;
  EXPECT_EQ(count(r.out, fmt::format("symmflow: all {} ranks: deadlock: {} ranks are each blocked", n, n)), 1u)
      << r.out;
  for (int p = 0; p < n; ++p)
    EXPECT_NE(r.out.find(fmt::format("rank {}: irecv tag 0 sequence 1: group 'world', rank {} waiting for rank {}",
                                     p, p, (p + 1) % n)), std::string::npos) << r.out;
  EXPECT_EQ(count(r.out, "recv_first.sf:8:9 (c10d::wait_tensor)"), size_t(n)) << r.out;
}

TEST_P(RuntimeErrorsCli, UnknownGroupNamesOpAndLocationInBothModes) {
  const int n = GetParam();
  for (const char* mode : {"eager", "compiled"}) {
    Result r = run("run " + kDir + "unknown_group.sf --mode " + mode + " --nproc " + std::to_string(n));
    EXPECT_EQ(r.rc, 1) << mode << r.out;
    EXPECT_NE(r.out.find(fmt::format("symmflow: all {} ranks: c10d::all_reduce at {}unknown_group.sf:4:8: "
                                     "dist::group: no group named 'tp'", n, kDir)), std::string::npos)
        << mode << r.out;
  }
}

TEST_P(RuntimeErrorsCli, SameErrorOnEveryRankNamesOpAndLocationOnce) {
  const int n = GetParam();
  Result r = run("run " + kDir + "div_by_zero.sf --nproc " + std::to_string(n));
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_EQ(count(r.out, "integer division by zero"), 1u) << r.out;
  EXPECT_NE(r.out.find(fmt::format("symmflow: all {} ranks: aten::div.Tensor_mode at {}div_by_zero.sf:5:8: ", n, kDir)),
            std::string::npos) << r.out;
}

INSTANTIATE_TEST_SUITE_P(Ranks, RuntimeErrorsCli, ::testing::Values(2, 3, 4),
                         [](const auto& info) { return std::to_string(info.param) + "ranks"; });

}  // namespace
