#include "symmflow/kernels/loops.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>
#include <utility>

namespace symmflow::kernels {
namespace {

// Every (output offset -> input offset) pair of a walk, with how often it came.
template <typename Walk>
std::map<std::pair<int64_t, int64_t>, int> visits(const char* origin, Walk walk, int64_t* max_run) {
  std::map<std::pair<int64_t, int64_t>, int> seen;
  *max_run = 0;
  walk([&](char** p, const int64_t* s, int64_t n) {
    *max_run = std::max(*max_run, n);
    for (int64_t i = 0; i < n; ++i) ++seen[{p[0] + i * s[0] - origin, p[1] + i * s[1] - origin}];
  });
  return seen;
}

// A [3, 70, 45] result read from a view whose two inner dims are transposed:
// the tiled walk visits exactly the pairs of the row-major walk, each once, in
// runs of at most one tile.
TEST(Loops, TiledWalkVisitsTheSamePairsInTileRuns) {
  const Shape shape{3, 70, 45};
  std::vector<char> mem(3 * 70 * 45 * 4);  // the offsets' memory (never read)
  std::array<char*, 2> base{mem.data(), mem.data()};
  std::array<std::vector<int64_t>, 2> st{std::vector<int64_t>{70 * 45 * 4, 45 * 4, 4},
                                         std::vector<int64_t>{70 * 45 * 4, 4, 70 * 4}};
  int64_t plain_run = 0, tiled_run = 0;
  auto plain = visits(mem.data(), [&](auto fn) { for_each_run<2>(shape, base, st, fn); }, &plain_run);
  auto tiled = visits(mem.data(), [&](auto fn) { for_each_run_tiled<2>(shape, base, st, fn); }, &tiled_run);
  EXPECT_EQ(plain.size(), size_t(3 * 70 * 45));
  EXPECT_EQ(tiled, plain);
  for (const auto& [pair, n] : tiled) ASSERT_EQ(n, 1);
  EXPECT_EQ(plain_run, 45);
  EXPECT_EQ(tiled_run, 8);
}

// Without a transposed operand the tiled walk is the row-major one (whole runs).
TEST(Loops, TiledWalkKeepsWholeRunsWhenNothingIsTransposed) {
  const Shape shape{70, 45};
  std::vector<char> mem(70 * 45 * 4);
  std::array<char*, 2> base{mem.data(), mem.data()};
  std::array<std::vector<int64_t>, 2> st{std::vector<int64_t>{45 * 4, 4}, std::vector<int64_t>{0, 4}};
  int64_t run = 0;
  auto seen = visits(mem.data(), [&](auto fn) { for_each_run_tiled<2>(shape, base, st, fn); }, &run);
  EXPECT_EQ(seen.size(), size_t(70 * 45));
  EXPECT_EQ(run, 45);
}

// A destination and an input that share a permuted layout (strides [1, 70] over
// [70, 45]: exp(x.t()) into a result of x.t()'s strides) are walked in their
// memory order as one run, not tiled; the pairs are the row-major walk's.
TEST(Loops, TiledWalkIsOneRunForOperandsInOnePermutedLayout) {
  const Shape shape{70, 45};
  std::vector<char> mem(70 * 45 * 4);
  std::array<char*, 2> base{mem.data(), mem.data()};
  std::array<std::vector<int64_t>, 2> st{std::vector<int64_t>{4, 70 * 4}, std::vector<int64_t>{4, 70 * 4}};
  int64_t plain_run = 0, run = 0;
  auto plain = visits(mem.data(), [&](auto fn) { for_each_run<2>(shape, base, st, fn); }, &plain_run);
  auto seen = visits(mem.data(), [&](auto fn) { for_each_run_tiled<2>(shape, base, st, fn); }, &run);
  EXPECT_EQ(seen, plain);
  EXPECT_EQ(plain_run, 45);  // row-major: runs across the destination's memory
  EXPECT_EQ(run, 70 * 45);
}

// In the destination's order, an input that is row-major is the transposed one:
// tiles, every pair once.
TEST(Loops, TiledWalkTilesTheInputThatIsTransposedAgainstThePermutedDestination) {
  const Shape shape{3, 70, 45};
  std::vector<char> mem(3 * 70 * 45 * 4);
  std::array<char*, 2> base{mem.data(), mem.data()};
  std::array<std::vector<int64_t>, 2> st{std::vector<int64_t>{70 * 45 * 4, 4, 70 * 4},
                                         std::vector<int64_t>{70 * 45 * 4, 45 * 4, 4}};
  int64_t plain_run = 0, run = 0;
  auto plain = visits(mem.data(), [&](auto fn) { for_each_run<2>(shape, base, st, fn); }, &plain_run);
  auto seen = visits(mem.data(), [&](auto fn) { for_each_run_tiled<2>(shape, base, st, fn); }, &run);
  EXPECT_EQ(seen, plain);
  for (const auto& [pair, n] : seen) ASSERT_EQ(n, 1);
  EXPECT_EQ(run, 8);
}

TEST(Loops, TiledWalkOfAnEmptyPermutedShapeVisitsNothing) {
  const Shape shape{3, 0, 2};
  std::array<char*, 2> base{nullptr, nullptr};
  std::array<std::vector<int64_t>, 2> st{std::vector<int64_t>{4, 12, 0}, std::vector<int64_t>{4, 12, 12}};
  int calls = 0;
  for_each_run_tiled<2>(shape, base, st, [&](char**, const int64_t*, int64_t) { ++calls; });
  EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace symmflow::kernels
