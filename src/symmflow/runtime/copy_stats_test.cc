// Staging owners: a copy is charged to the owner current when it is counted,
// or to the one a work kept from its start; the executor takes each owner's
// copies once.
#include "symmflow/runtime/copy_stats.h"

#include <gtest/gtest.h>

namespace symmflow::dist {
namespace {

TEST(StagingOwners, ACopyIsChargedToTheOwnerCurrentWhenCounted) {
  const int64_t first = new_staging_owners(2);
  const CopyStats before = staged_copy_stats();
  {
    const ScopedStagingOwner a(first);
    count_staged_copy(64);
    {
      const ScopedStagingOwner b(first + 1);
      count_staged_copy(8);
    }
    count_staged_copy(32);  // a again once b's scope ends
  }
  EXPECT_EQ(staging_owner(), kNoStagingOwner);
  count_staged_copy(1000);  // no owner: the totals only
  const CopyStats a = take_staged_copies(first), b = take_staged_copies(first + 1);
  EXPECT_EQ(a.count, 2u);
  EXPECT_EQ(a.bytes, 96u);
  EXPECT_EQ(b.count, 1u);
  EXPECT_EQ(b.bytes, 8u);
  EXPECT_EQ(staged_copy_stats().bytes - before.bytes, 1104u);
  EXPECT_EQ(take_staged_copies(first).count, 0u) << "taken once";
}

TEST(StagingOwners, AWorksOwnerWinsOverTheOneThatProgressesIt) {
  const int64_t owners = new_staging_owners(2);
  const int64_t started_by = owners, progressed_by = owners + 1;
  const ScopedStagingOwner now(progressed_by);
  count_staged_copy_for(started_by, 128);  // a work started under `started_by`
  EXPECT_EQ(take_staged_copies(started_by).bytes, 128u);
  EXPECT_EQ(take_staged_copies(progressed_by).count, 0u);
}

TEST(StagingOwners, ProgramsGetDisjointRanges) {
  const int64_t a = new_staging_owners(10), b = new_staging_owners(10);
  EXPECT_GE(b, a + 10);
}

}  // namespace
}  // namespace symmflow::dist
