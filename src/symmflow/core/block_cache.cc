#include "symmflow/core/block_cache.h"

#include <cstdlib>

#include "symmflow/core/params.h"

namespace symmflow {

BlockCache::~BlockCache() {
  for (auto& [bytes, p] : kept_) std::free(p);
}

BlockCache::Block BlockCache::take(size_t bytes) {
  if (bytes < kMinBytes) return {};
  std::lock_guard<std::mutex> lock(mu_);
  auto it = kept_.lower_bound(bytes);
  if (it == kept_.end() || it->first > bytes + bytes / 8) return {};
  const Block b{it->second, it->first};
  bytes_ -= it->first;
  kept_.erase(it);
  return b;
}

bool BlockCache::give(void* p, size_t bytes) {
  if (p == nullptr || bytes < kMinBytes || bytes > limit_) return false;
  std::lock_guard<std::mutex> lock(mu_);
  while (bytes_ + bytes > limit_) {  // the largest first: they hold the most for the fewest reuses
    auto largest = std::prev(kept_.end());
    bytes_ -= largest->first;
    std::free(largest->second);
    kept_.erase(largest);
  }
  kept_.emplace(bytes, p);
  bytes_ += bytes;
  return true;
}

size_t BlockCache::bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_;
}

size_t BlockCache::blocks() const {
  std::lock_guard<std::mutex> lock(mu_);
  return kept_.size();
}

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

}  // namespace

BlockCache& regular_block_cache() {
  static BlockCache* cache = new BlockCache(
      kAddressSanitizer && !params::is_set("SYMMFLOW_ALLOC_CACHE") ? 0 : params::bytes("SYMMFLOW_ALLOC_CACHE"));
  return *cache;
}

}  // namespace symmflow
