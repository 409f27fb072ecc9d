#include "symmflow/core/hash.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace symmflow {
namespace {

// The published FNV-1a 64 test vectors: a user's own implementation (Python,
// numpy) gives the checksums `symmflow run` prints.
TEST(Fnv1a, MatchesThePublishedTestVectors) {
  EXPECT_EQ(fnv1a("", 0), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a("a", 1), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a("foobar", 6), 0x85944171f73967e8ull);
}

TEST(Fnv1a, ContinuesAcrossCalls) {
  const std::string s = "symmetric memory";
  EXPECT_EQ(fnv1a(s.data() + 9, s.size() - 9, fnv1a(s.data(), 9)), fnv1a(s.data(), s.size()));
}

TEST(Fnv1a, IntegerIsItsLittleEndianBytes) {
  const int64_t v = -0x0123456789abcdefll;
  unsigned char le[8];
  for (int i = 0; i < 8; ++i) le[i] = (uint64_t(v) >> (8 * i)) & 0xff;
  EXPECT_EQ(fnv1a_int(kFnv1aBasis, v), fnv1a(le, 8));
  EXPECT_NE(fnv1a_int(kFnv1aBasis, 1), fnv1a_int(kFnv1aBasis, 256));
}

}  // namespace
}  // namespace symmflow
