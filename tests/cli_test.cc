// The `symmflow` command line, run as a user runs it.
#include <gtest/gtest.h>

#include "cli_util.h"

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

}  // namespace
