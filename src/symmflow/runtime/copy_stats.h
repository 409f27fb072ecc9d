// Counters of the bytes that staged paths copy: a tensor that is not in symmetric
// memory (or not contiguous) is copied into the symmetric heap before a
// collective or send and out of it after; every such copy is counted here so that
// callers (the compiler's reports, benchmarks, tests) can see and assert them.
#pragma once
#include <cstdint>

namespace symmflow::dist {

struct CopyStats {
  uint64_t count = 0;  // number of copies (one per tensor copied in or out)
  uint64_t bytes = 0;  // bytes copied
};

// This process's totals since start (or the last reset). Thread-safe.
CopyStats staged_copy_stats();
void reset_staged_copy_stats();
// Called by the staged paths themselves.
void count_staged_copy(uint64_t bytes);

}  // namespace symmflow::dist
