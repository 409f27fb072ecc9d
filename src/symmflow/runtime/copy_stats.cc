#include "symmflow/runtime/copy_stats.h"

#include <atomic>

namespace symmflow::dist {
namespace {
std::atomic<uint64_t> g_count{0}, g_bytes{0};
}

CopyStats staged_copy_stats() {
  return {g_count.load(std::memory_order_relaxed), g_bytes.load(std::memory_order_relaxed)};
}
void reset_staged_copy_stats() {
  g_count.store(0, std::memory_order_relaxed);
  g_bytes.store(0, std::memory_order_relaxed);
}
void count_staged_copy(uint64_t bytes) {
  g_count.fetch_add(1, std::memory_order_relaxed);
  g_bytes.fetch_add(bytes, std::memory_order_relaxed);
}

}  // namespace symmflow::dist
