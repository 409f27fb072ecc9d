// The block cache keeps large freed blocks for the next allocation of about
// their size, never more than its limit, and the regular allocator uses it.
#include "symmflow/core/block_cache.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>
#include <vector>

#include "symmflow/core/storage.h"

namespace symmflow {
namespace {

constexpr size_t MiB = size_t(1) << 20;

void* block(size_t bytes) { return std::aligned_alloc(64, bytes); }

TEST(BlockCache, AFreedLargeBlockIsTheNextAllocationOfItsSize) {
  BlockCache cache(64 * MiB);
  void* p = block(2 * MiB);
  ASSERT_TRUE(cache.give(p, 2 * MiB));
  EXPECT_EQ(cache.bytes(), 2 * MiB);
  const BlockCache::Block b = cache.take(2 * MiB);
  EXPECT_EQ(b.p, p);
  EXPECT_EQ(b.bytes, 2 * MiB);
  EXPECT_EQ(cache.bytes(), 0u);
  EXPECT_EQ(cache.take(2 * MiB).p, nullptr);  // taken once, not twice
  std::free(p);
}

TEST(BlockCache, ABlockAtMostAnEighthLargerServesARequestWithItsTrueSize) {
  BlockCache cache(64 * MiB);
  void* fits = block(2 * MiB + MiB / 4);  // 9/8 of 2 MiB
  void* too_big = block(3 * MiB);
  ASSERT_TRUE(cache.give(too_big, 3 * MiB));
  EXPECT_EQ(cache.take(2 * MiB).p, nullptr);  // 3 MiB is more than 2 MiB + 1/8
  ASSERT_TRUE(cache.give(fits, 2 * MiB + MiB / 4));
  const BlockCache::Block b = cache.take(2 * MiB);
  EXPECT_EQ(b.p, fits);
  EXPECT_EQ(b.bytes, 2 * MiB + MiB / 4);  // what give() must be told when it comes back
  EXPECT_EQ(cache.take(4 * MiB).p, nullptr);  // never a smaller block
  std::free(fits);
}

TEST(BlockCache, SmallBlocksBlocksOverTheLimitAndALimitOfZeroKeepNothing) {
  BlockCache cache(4 * MiB);
  void* small = block(BlockCache::kMinBytes / 2);
  EXPECT_FALSE(cache.give(small, BlockCache::kMinBytes / 2));
  EXPECT_EQ(cache.take(BlockCache::kMinBytes / 2).p, nullptr);
  void* big = block(8 * MiB);
  EXPECT_FALSE(cache.give(big, 8 * MiB));
  BlockCache off(0);
  EXPECT_FALSE(off.give(big, 8 * MiB));
  EXPECT_EQ(cache.bytes() + off.bytes(), 0u);
  std::free(small);
  std::free(big);
}

TEST(BlockCache, KeptBytesStayUnderTheLimitTheLargestFreedFirst) {
  BlockCache cache(6 * MiB);
  for (size_t m : {1, 2, 3}) ASSERT_TRUE(cache.give(block(m * MiB), m * MiB));
  EXPECT_EQ(cache.bytes(), 6 * MiB);
  ASSERT_TRUE(cache.give(block(2 * MiB), 2 * MiB));  // 8 > 6: the 3 MiB block goes
  EXPECT_EQ(cache.bytes(), 5 * MiB);
  EXPECT_EQ(cache.blocks(), 3u);
  EXPECT_EQ(cache.take(3 * MiB).p, nullptr);
  for (size_t m : {1, 2, 2}) {
    const BlockCache::Block b = cache.take(m * MiB);
    ASSERT_NE(b.p, nullptr) << m;
    std::free(b.p);
  }
  EXPECT_EQ(cache.bytes(), 0u);
}

TEST(BlockCache, ThreadsGivingAndTakingKeepTheCountRight) {
  BlockCache cache(16 * MiB);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&cache] {
      for (int i = 0; i < 500; ++i) {
        BlockCache::Block b = cache.take(2 * MiB);
        if (b.p == nullptr) b = {block(2 * MiB), 2 * MiB};
        static_cast<char*>(b.p)[0] = 1;
        if (!cache.give(b.p, b.bytes)) std::free(b.p);
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_LE(cache.bytes(), 16 * MiB);
  EXPECT_EQ(cache.bytes(), cache.blocks() * 2 * MiB);
  EXPECT_GE(cache.blocks(), 1u);
}

// An eager result of a few MiB gets the block of the last one that died, where
// glibc would map a fresh block whose pages fault in again.
TEST(RegularAllocator, ALargeStorageReusesTheBlockOfOneThatDied) {
  if (regular_block_cache().limit() == 0) GTEST_SKIP() << "the cache is off (AddressSanitizer or SYMMFLOW_ALLOC_CACHE=0)";
  void* first;
  {
    auto s = regular_allocator().allocate(4 * MiB);
    first = s->data();
  }
  auto again = regular_allocator().allocate(4 * MiB - 100);  // the same size class
  EXPECT_EQ(again->data(), first);
  EXPECT_EQ(again->nbytes(), 4 * MiB - 100);
  auto other = regular_allocator().allocate(4 * MiB);  // the block is taken: a new one
  EXPECT_NE(other->data(), first);
  auto small = regular_allocator().allocate(4096);
  EXPECT_NE(small->data(), nullptr);
}

}  // namespace
}  // namespace symmflow
