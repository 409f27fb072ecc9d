// The `symmflow` command line, run as a user runs it.
#include <gtest/gtest.h>

#include "cli_util.h"
#include "symmflow/core/params.h"
#include "symmflow/version.h"

#include <array>
#include <cstdio>
#include <string>
#include <sys/wait.h>

namespace {

using sf_test::Result;
using sf_test::run;

TEST(Cli, OpsListsSymmMemWithSymmetricArgs) {
  Result r = run("ops symm_mem");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("symm_mem::multimem_all_reduce_(Tensor(a!) input, str reduce_op, str "
                       "group_name) -> Tensor(a!)\n    kernels: CPU, Meta   symmetric: input"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("aten::"), std::string::npos);
}

TEST(Cli, OpsJsonAndErrors) {
  Result j = run("ops c10d --json");
  ASSERT_EQ(j.rc, 0);
  EXPECT_NE(j.out.find("\"name\": \"c10d::batch_isend_irecv\""), std::string::npos);
  EXPECT_NE(j.out.find("\"mutation_resolver\": true"), std::string::npos);
  EXPECT_EQ(run("ops no_such_namespace").rc, 2);
  EXPECT_EQ(run("frobnicate").rc, 2);
  EXPECT_EQ(run("").rc, 2);
}

TEST(Cli, LaunchRunsRanksAndReportsTheFailingOne) {
  Result ok = run("launch --nproc 3 -- sh -c 'echo hello $SYMMFLOW_RANK/$SYMMFLOW_WORLD_SIZE'");
  ASSERT_EQ(ok.rc, 0) << ok.out;
  for (int r = 0; r < 3; ++r)
    EXPECT_NE(ok.out.find("[rank " + std::to_string(r) + "] hello " + std::to_string(r) + "/3"),
              std::string::npos)
        << ok.out;
  Result bad = run("launch --nproc 2 -- sh -c 'exit $((SYMMFLOW_RANK * 7))'");
  EXPECT_EQ(bad.rc, 7) << bad.out;
  EXPECT_EQ(run("launch --nproc 0 -- true").rc, 2);
}

TEST(Cli, VersionIsTheProjectsVersion) {
  Result r = run("--version");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(r.out.rfind("symmflow " SYMMFLOW_VERSION, 0), 0u) << r.out;  // then " (git ...)" in a checkout
  Result help = run("--help");
  EXPECT_NE(help.out.find("--version"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("find_package(symmflow)"), std::string::npos) << help.out;
}

// One rank limit (params::kMaxRanks) for every command: one more is refused by
// each (exit 2), each help states the same range, and the limit itself runs.
TEST(Cli, EveryCommandHasTheSameRankLimit) {
  const std::string ring = std::string(SF_SOURCE_DIR) + "/examples/ring_overlap/ring_overlap.sf";
  const std::string over = std::to_string(symmflow::params::kMaxRanks + 1);
  const std::string max = std::to_string(symmflow::params::kMaxRanks);
  const std::pair<std::string, std::string> commands[] = {
      {"run " + ring + " --nproc " + over, "run --help"},
      {"launch --nproc " + over + " -- true", "launch --help"},
      {"bench collectives --nproc " + over, "bench collectives --help"},
      {"compile " + ring + " --world " + over, "compile --help"},
      {"tune --nproc " + over, "tune --help"},
  };
  for (const auto& [refused, help] : commands) {
    Result r = run(refused);
    EXPECT_EQ(r.rc, 2) << refused << "\n" << r.out;
    EXPECT_NE(r.out.find(over), std::string::npos) << refused << "\n" << r.out;
    Result h = run(help);
    const std::string want = (help == "tune --help" ? "[2 - " : "[1 - ") + max + "]";  // tune compares worlds of 2+
    EXPECT_NE(h.out.find(want), std::string::npos) << help << "\n" << h.out;
  }
  // The limit itself is a world the runtime starts (128 processes of `true`: under a second).
  Result full = run("launch --nproc " + max + " -- true");
  EXPECT_EQ(full.rc, 0) << full.out;
}

}  // namespace
