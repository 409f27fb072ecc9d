// FNV-1a (64-bit), the one byte hash of symmflow: the memory plan's fingerprint
// that every rank must agree on (passes/memory_plan.cc) and the checksum of each
// output that `symmflow run` prints (tools/run_summary.cc). Not cryptographic;
// chosen because anyone recomputes it in a few lines from a saved .npy's data
// (docs/ir.md, "What `run` prints").
//
//   uint64_t h = fnv1a(t.data_ptr(), t.nbytes());      // a contiguous tensor's bytes
//   h = fnv1a_int(h, offset);                           // then an integer's 8 bytes
#pragma once
#include <cstddef>
#include <cstdint>

namespace symmflow {

inline constexpr uint64_t kFnv1aBasis = 14695981039346656037ull;
inline constexpr uint64_t kFnv1aPrime = 1099511628211ull;

// Continues `h` over n bytes (start with kFnv1aBasis, the default).
inline uint64_t fnv1a(const void* data, size_t n, uint64_t h = kFnv1aBasis) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= kFnv1aPrime;
  }
  return h;
}

// Continues `h` over v's eight bytes, least significant first: the same value on
// every host, whatever its byte order.
inline uint64_t fnv1a_int(uint64_t h, int64_t v) {
  for (int i = 0; i < 8; ++i) {
    h ^= uint64_t(v >> (8 * i)) & 0xff;
    h *= kFnv1aPrime;
  }
  return h;
}

}  // namespace symmflow
