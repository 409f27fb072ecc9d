#include "symmflow/runtime/copy_stats.h"

#include <atomic>
#include <mutex>
#include <unordered_map>

namespace symmflow::dist {
namespace {
std::atomic<uint64_t> g_count{0}, g_bytes{0};
std::atomic<int64_t> g_next_owner{0};
thread_local int64_t t_owner = kNoStagingOwner;
// Only copies with an owner land here (the executor's runs), on the staged
// path, never per element: a lock is cheap beside the copy it counts.
std::mutex g_owned_mutex;
std::unordered_map<int64_t, CopyStats> g_owned;
}  // namespace

CopyStats staged_copy_stats() {
  return {g_count.load(std::memory_order_relaxed), g_bytes.load(std::memory_order_relaxed)};
}
void reset_staged_copy_stats() {
  g_count.store(0, std::memory_order_relaxed);
  g_bytes.store(0, std::memory_order_relaxed);
}
void count_staged_copy(uint64_t bytes) { count_staged_copy_for(t_owner, bytes); }
void count_staged_copy_for(int64_t owner, uint64_t bytes) {
  g_count.fetch_add(1, std::memory_order_relaxed);
  g_bytes.fetch_add(bytes, std::memory_order_relaxed);
  if (owner == kNoStagingOwner) return;
  std::lock_guard lock(g_owned_mutex);
  CopyStats& s = g_owned[owner];
  ++s.count;
  s.bytes += bytes;
}

int64_t staging_owner() { return t_owner; }
ScopedStagingOwner::ScopedStagingOwner(int64_t owner) : previous_(t_owner) { t_owner = owner; }
ScopedStagingOwner::~ScopedStagingOwner() { t_owner = previous_; }

int64_t new_staging_owners(int64_t n) { return g_next_owner.fetch_add(n, std::memory_order_relaxed); }

CopyStats take_staged_copies(int64_t owner) {
  std::lock_guard lock(g_owned_mutex);
  auto it = g_owned.find(owner);
  if (it == g_owned.end()) return {};
  const CopyStats s = it->second;
  g_owned.erase(it);
  return s;
}

}  // namespace symmflow::dist
