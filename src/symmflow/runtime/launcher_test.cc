// The launcher: exit codes, output prefixing, environment, job timeout, hygiene.
#include "symmflow/runtime/launcher.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "symmflow/core/error.h"
#include "symmflow/runtime/test_util.h"
#include "symmflow/runtime/world.h"

namespace symmflow::runtime {
namespace {

using testing::run_job;

int env_int(const char* name) {
  const char* v = std::getenv(name);
  SF_CHECK(v != nullptr, "{} missing", name);
  return std::atoi(v);
}

TEST(Launcher, EnvironmentOfEveryRank) {
  auto r = run_job(3, [] {
    int rank = env_int("SYMMFLOW_RANK");
    SF_CHECK(env_int("SYMMFLOW_WORLD_SIZE") == 3, "world size");
    SF_CHECK(env_int("SYMMFLOW_LOCAL_RANK") == rank, "local rank");
    SF_CHECK(env_int("SYMMFLOW_LOCAL_WORLD_SIZE") == 3, "local world size");
    std::string tok = std::getenv("SYMMFLOW_JOB_TOKEN");
    SF_CHECK(tok.size() == 32, "token {}", tok);
    std::string rdv = std::getenv("SYMMFLOW_RENDEZVOUS");
    SF_CHECK(!job_id_of(rdv).empty(), "rendezvous {}", rdv);
    return 0;
  });
  SF_EXPECT_JOB_OK(r);
}

TEST(Launcher, ReturnsFailingRanksExitCode) {
  auto r = run_job(3, [] { return env_int("SYMMFLOW_RANK") == 1 ? 7 : 0; });
  EXPECT_EQ(r.rc, 7);
  EXPECT_EQ(r.report.first_failed_rank, 1);
  EXPECT_EQ(r.report.status, (std::vector<int>{0, 7, 0}));
  testing::expect_clean(r);
}

TEST(Launcher, ExceptionInBodyIsReportedAndExitsOne) {
  auto r = run_job(2, []() -> int {
    if (env_int("SYMMFLOW_RANK") == 0) fail("expected {} found {}", 1, 2);
    return 0;
  });
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("[rank 0] symmflow: rank 0: expected 1 found 2"), std::string::npos) << r.err;
  testing::expect_clean(r);
}

// Ranks that end with the same error: the launcher prints it once, not once
// per rank; a different one is printed with its rank.
TEST(Launcher, SameErrorOnEveryRankIsPrintedOnce) {
  auto r = run_job(3, []() -> int {
    dist::init();
    fail("no group named 'tp'");
  });
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("symmflow: all 3 ranks: no group named 'tp'\n"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("no group named 'tp'"), r.err.rfind("no group named 'tp'")) << r.err;
  testing::expect_clean(r);
}

TEST(Launcher, DifferingErrorsArePrintedWithTheirRanks) {
  auto r = run_job(3, []() -> int {
    dist::init();
    fail("{}", dist::world().rank() == 1 ? "bad input" : "bad shape");
  });
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("symmflow: ranks 0, 2: bad shape\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("symmflow: rank 1: bad input\n"), std::string::npos) << r.err;
  testing::expect_clean(r);
}

TEST(Launcher, PrefixesEveryLine) {
  auto r = run_job(2, [] {
    int rank = env_int("SYMMFLOW_RANK");
    std::printf("hello from %d\nsecond line %d\n", rank, rank);
    std::fprintf(stderr, "to stderr %d\n", rank);
    std::printf("no newline at the end %d", rank);
    return 0;
  });
  SF_EXPECT_JOB_OK(r);
  for (int k = 0; k < 2; ++k) {
    auto p = fmt::format("[rank {}] ", k);
    EXPECT_NE(r.out.find(p + fmt::format("hello from {}\n", k)), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(p + fmt::format("second line {}\n", k)), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(p + fmt::format("no newline at the end {}\n", k)), std::string::npos);
    EXPECT_NE(r.err.find(p + fmt::format("to stderr {}\n", k)), std::string::npos) << r.err;
  }
}

TEST(Launcher, WithoutPrefixOutputGoesStraightThrough) {
  auto r = run_job(1, [] {
    std::printf("plain\n");
    return 0;
  }, [](LaunchOptions& o) { o.prefix_output = false; });
  SF_EXPECT_JOB_OK(r);
  EXPECT_EQ(r.out, "plain\n");
}

TEST(Launcher, KilledRankGives128PlusSignal) {
  auto r = run_job(2, [] {
    if (env_int("SYMMFLOW_RANK") == 1) raise(SIGKILL);
    return 0;
  });
  EXPECT_EQ(r.rc, 128 + SIGKILL);
  EXPECT_EQ(r.report.first_failed_rank, 1);
  EXPECT_NE(r.report.abort_reason.find("rank 1"), std::string::npos) << r.report.abort_reason;
  testing::expect_clean(r);
}

TEST(Launcher, JobTimeoutKillsEverythingAndCleansUp) {
  // Rank 1 never attaches, so rank 0 is stuck in bootstrap with the control
  // block and the world segment still linked: only the launcher can remove them.
  auto r = run_job(2, [] {
    if (env_int("SYMMFLOW_RANK") == 1) sleep(100);
    dist::init();
    return 0;
  }, [](LaunchOptions& o) {
    o.timeout_s = 0.5;
    o.grace_s = 0.2;
  });
  EXPECT_EQ(r.rc, 124);
  EXPECT_LT(r.seconds, 5);
  EXPECT_NE(r.report.abort_reason.find("job timeout"), std::string::npos);
  testing::expect_clean(r);
  EXPECT_EQ(r.report.segments_unlinked, 2);  // control block + world's segment
}

TEST(Launcher, ExecsACommand) {
  LaunchOptions o;
  o.nproc = 2;
  o.argv = {"/bin/sh", "-c", "echo rank=$SYMMFLOW_RANK of $SYMMFLOW_WORLD_SIZE; exit $((3*SYMMFLOW_RANK))"};
  o.out_fd = memfd_create("out", 0);
  LaunchReport rep;
  int rc = launch(o, &rep);
  std::string out = testing::read_memfd(o.out_fd);
  EXPECT_EQ(rc, 3);
  EXPECT_NE(out.find("[rank 0] rank=0 of 2\n"), std::string::npos) << out;
  EXPECT_NE(out.find("[rank 1] rank=1 of 2\n"), std::string::npos) << out;
  EXPECT_TRUE(list_job_segments(rep.job_id).empty());
}

TEST(Launcher, MissingProgramIs127) {
  LaunchOptions o;
  o.nproc = 1;
  o.argv = {"/nonexistent/program"};
  o.err_fd = memfd_create("err", 0);
  EXPECT_EQ(launch(o), 127);
  std::string err = testing::read_memfd(o.err_fd);
  EXPECT_NE(err.find("cannot execute '/nonexistent/program'"), std::string::npos) << err;
}

}  // namespace
}  // namespace symmflow::runtime

namespace symmflow::runtime {
namespace {

// Run as a rank program by ExecsARealRankProgram (disabled when run directly):
// a full exec'd rank — init from the environment, symmetric memory, barrier,
// and shutdown through atexit when main returns.
TEST(LauncherRankProgram, DISABLED_Body) {
  dist::init();
  auto& w = dist::world();
  auto st = w.heap().allocate(64);
  static_cast<int*>(st->peer_ptr((w.rank() + 1) % w.size()))[0] = 100 + w.rank();
  w.barrier("exec'd ranks");
  std::printf("rank %d of %d got %d\n", w.rank(), w.size(), static_cast<int*>(st->data())[0]);
  w.barrier("done");
}

TEST(Launcher, ExecsARealRankProgram) {
  LaunchOptions o;
  o.nproc = 3;
  o.argv = {"/proc/self/exe", "--gtest_filter=LauncherRankProgram.DISABLED_Body",
            "--gtest_also_run_disabled_tests"};
  o.out_fd = memfd_create("out", 0);
  o.err_fd = memfd_create("err", 0);
  LaunchReport rep;
  int rc = launch(o, &rep);
  std::string out = testing::read_memfd(o.out_fd), err = testing::read_memfd(o.err_fd);
  EXPECT_EQ(rc, 0) << out << err;
  for (int r = 0; r < 3; ++r)
    EXPECT_NE(out.find(fmt::format("[rank {}] rank {} of 3 got {}", r, r, 100 + (r + 2) % 3)),
              std::string::npos) << out;
  EXPECT_TRUE(list_job_segments(rep.job_id).empty());
  EXPECT_EQ(rep.segments_unlinked, 0);
}

}  // namespace
}  // namespace symmflow::runtime
