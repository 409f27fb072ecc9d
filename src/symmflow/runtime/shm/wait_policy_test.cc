// The one place that decides how waits spend their time (wait_policy.h):
// ranks vs usable CPUs, and the two variables that override it.
#include "symmflow/runtime/shm/wait_policy.h"

#include <gtest/gtest.h>

#include "symmflow/core/params_testing.h"

namespace symmflow::runtime {
namespace {

using params::testing::EnvGuard;

TEST(WaitPolicy, RanksThatFitTheUsableCpusSpinAndYield) {
  EnvGuard a("SYMMFLOW_OVERSUBSCRIBED", nullptr), b("SYMMFLOW_YIELD_US", nullptr);
  const WaitPolicy p = choose_wait_policy(usable_cpus());
  EXPECT_FALSE(p.oversubscribed);
  EXPECT_EQ(p.spin_us, 20);
  EXPECT_EQ(p.yield_us, 100);
}

TEST(WaitPolicy, MoreRanksThanUsableCpusGoToSleepAfterAShortSpin) {
  EnvGuard a("SYMMFLOW_OVERSUBSCRIBED", nullptr), b("SYMMFLOW_YIELD_US", nullptr);
  const WaitPolicy p = choose_wait_policy(usable_cpus() + 1);
  EXPECT_TRUE(p.oversubscribed);
  EXPECT_EQ(p.spin_us, 1);
  EXPECT_EQ(p.yield_us, 0);
}

TEST(WaitPolicy, EnvironmentForcesTheChoiceAndTheYieldPhase) {
  {
    EnvGuard a("SYMMFLOW_OVERSUBSCRIBED", "1"), b("SYMMFLOW_YIELD_US", "50");
    const WaitPolicy p = choose_wait_policy(1);
    EXPECT_TRUE(p.oversubscribed);
    EXPECT_EQ(p.yield_us, 50);
  }
  {
    EnvGuard a("SYMMFLOW_OVERSUBSCRIBED", "0");
    EXPECT_FALSE(choose_wait_policy(usable_cpus() * 4).oversubscribed);
  }
}

TEST(WaitPolicy, SetPolicyIsWhatWaitsRead) {
  const WaitPolicy saved = wait_policy();
  set_wait_policy({true, 3, 7});
  EXPECT_TRUE(oversubscribed());
  EXPECT_EQ(wait_policy().spin_us, 3);
  EXPECT_EQ(wait_policy().yield_us, 7);
  set_wait_policy(saved);
}

}  // namespace
}  // namespace symmflow::runtime
