// Exhaustive checks over f32 for the benchmarks that reproduce another
// library's bits (bench/gelu_erf.cc, bench/exp16.cc).
//
//   bool same = sfbench::for_every_f32([&](const float* x, int64_t n) { ...; return ok; });
#pragma once
#include <cstdint>
#include <cstring>
#include <vector>

namespace sfbench {

// Calls check(x, n) on every f32 bit pattern in order, in chunks of 2^22;
// false as soon as check returns false.
template <typename Check>
bool for_every_f32(Check&& check) {
  const int64_t chunk = int64_t(1) << 22;
  std::vector<float> x(static_cast<size_t>(chunk));
  for (uint64_t base = 0; base < (uint64_t(1) << 32); base += uint64_t(chunk)) {
    for (int64_t i = 0; i < chunk; ++i) {
      const uint32_t u = uint32_t(base + uint64_t(i));
      std::memcpy(&x[size_t(i)], &u, sizeof u);
    }
    if (!check(x.data(), chunk)) return false;
  }
  return true;
}

// The first index where a and b differ in their bits, or -1.
inline int64_t first_bit_difference(const float* a, const float* b, int64_t n) {
  if (std::memcmp(a, b, size_t(n) * sizeof(float)) == 0) return -1;
  for (int64_t i = 0; i < n; ++i)
    if (std::memcmp(a + i, b + i, sizeof(float)) != 0) return i;
  return -1;
}

inline uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

}  // namespace sfbench
