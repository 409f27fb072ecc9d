// Run-time failures as a user sees them (docs/runtime.md "Deadlocks" and
// "Errors"): a deadlocked program fails on every rank within about a second
// with one report naming each rank's pending op and its .sf location; an
// error the ranks share is printed once, with the op and the location.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

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

// An error the ranks share is printed once, naming op and location, and every
// rank is accounted for: "all 4 ranks: <error>", or, when a slow rank was
// still in an earlier collective as a peer failed and the abort stopped it
// there, "ranks 0, 1, 3: <error>" and "rank 2: stopped when rank 0 failed
// (...)" (runtime/shm/control_block.h). Returns what is wrong, or "".
std::string shared_error_reported_once(const std::string& out, int n, const std::string& error) {
  if (count(out, error) != 1) return fmt::format("expected '{}' exactly once", error);
  std::vector<bool> named(size_t(n), false);
  size_t at = 0;
  for (size_t nl; at < out.size(); at = nl + 1) {
    nl = out.find('\n', at);
    if (nl == std::string::npos) nl = out.size();
    const std::string line = out.substr(at, nl - at);
    const std::string all = fmt::format("symmflow: all {} ranks: ", n);
    if (line.rfind(all + error, 0) == 0) named.assign(size_t(n), true);
    int k = -1, by = -1;
    if (std::sscanf(line.c_str(), "symmflow: rank %d: stopped when rank %d failed", &k, &by) == 2 && k >= 0 &&
        k < n)
      named[size_t(k)] = true;
    const size_t e = line.find(": " + error);
    if (line.rfind("symmflow: rank", 0) == 0 && e != std::string::npos) {
      const size_t list = line.find(' ', 10) + 1;  // after "symmflow: rank " or "ranks "
      std::istringstream ranks(line.substr(list, e - list));  // "0, 1, 3"
      for (int r; ranks >> r; ranks.ignore(1, ','))
        if (r >= 0 && r < n) named[size_t(r)] = true;
    }
  }
  for (int r = 0; r < n; ++r)
    if (!named[size_t(r)]) return fmt::format("rank {} is named neither with the error nor as stopped by it", r);
  return "";
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
    EXPECT_EQ(shared_error_reported_once(
                  r.out, n, fmt::format("c10d::all_reduce at {}unknown_group.sf:4:8: dist::group: no group named 'tp'", kDir)),
              "")
        << mode << r.out;
  }
}

TEST_P(RuntimeErrorsCli, SameErrorOnEveryRankNamesOpAndLocationOnce) {
  const int n = GetParam();
  Result r = run("run " + kDir + "div_by_zero.sf --nproc " + std::to_string(n));
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_EQ(count(r.out, "integer division by zero"), 1u) << r.out;
  EXPECT_EQ(shared_error_reported_once(r.out, n, fmt::format("aten::div.Tensor_mode at {}div_by_zero.sf:5:8: ", kDir)), "")
      << r.out;
}

INSTANTIATE_TEST_SUITE_P(Ranks, RuntimeErrorsCli, ::testing::Values(2, 3, 4),
                         [](const auto& info) { return std::to_string(info.param) + "ranks"; });

}  // namespace
