#include "symmflow/ir/pool.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace symmflow::ir {
namespace {

// Counts its destructions, and holds a heap string so that a leak or a double
// destruction shows under the sanitizers of the fuzz build.
struct Counted {
  static int destroyed;
  std::string text = std::string(40, 'x');
  int64_t id = 0;
  ~Counted() { ++destroyed; }
};
int Counted::destroyed = 0;

TEST(Pool, MakesObjectsThatStayPutAndDestroysEachOnceWithThePool) {
  Counted::destroyed = 0;
  constexpr int kCount = 100'000;  // past several doublings and the first 2 MiB blocks
  std::vector<Counted*> made;
  {
    Pool<Counted> pool;
    for (int i = 0; i < kCount; ++i) {
      Counted* c = pool.make();
      c->id = i;
      made.push_back(c);
    }
    // Later blocks must not move earlier objects: every pointer still reads its own.
    for (int i = 0; i < kCount; ++i) ASSERT_EQ(made[size_t(i)]->id, i);
    EXPECT_EQ(Counted::destroyed, 0);
  }
  EXPECT_EQ(Counted::destroyed, kCount);
}

TEST(Pool, LaysOutObjectsInCreationOrderWithinABlock) {
  Pool<Counted> pool;
  Counted* first = pool.make();
  Counted* second = pool.make();
  EXPECT_EQ(second, first + 1);  // neighbours in creation order are neighbours in memory
}

TEST(Pool, GivesHugeBlocksTheHugePageAlignment) {
  Pool<Counted> pool;
  // Enough objects that the doubling reaches 2 MiB: the object after the last
  // one of a smaller block starts a block on a 2 MiB boundary.
  Counted* prev = pool.make();
  bool saw_huge_block = false;
  for (int i = 0; i < 200'000 && !saw_huge_block; ++i) {
    Counted* c = pool.make();
    if (c != prev + 1 && reinterpret_cast<uintptr_t>(c) % (uintptr_t(2) << 20) == 0) saw_huge_block = true;
    prev = c;
  }
  EXPECT_TRUE(saw_huge_block);
}

}  // namespace
}  // namespace symmflow::ir
