// Large regular blocks kept after their storage dies, for the next allocation
// of (about) their size. Why: glibc serves a block of more than its mmap
// threshold (128 KiB, raised at run time up to 32 MiB) with a fresh mapping
// and unmaps it on free, so every page of the next result is faulted and
// zeroed again on first touch. On the VM these numbers come from, a 64 MiB
// result's first touch takes 186 ms against 4 ms for a copy into a block
// already touched, and whether a 16 MiB result is mapped afresh depends on the
// heap's history: RMSNorm over 4096 x 1024 written as six eager ops took
// 2.5-3.2 ms in some processes and 93-97 ms in others. With the cache, the
// chain relu(x + row) * 0.5 over 4096 x 4096 takes 6.9-7.3 ms per fused call
// against 202-288 ms without (bench/large_blocks.py; docs/performance.md,
// "Round 14"). PyTorch's CPU allocator keeps nothing; its CUDA allocator
// caches blocks the same way.
//
//   BlockCache cache(256 << 20);           // keeps at most 256 MiB
//   auto b = cache.take(bytes);            // a kept block of bytes..bytes*9/8, or {nullptr, 0}
//   if (!cache.give(b.p, b.bytes)) free(b.p);  // keep it, or not (too small, cache full)
//
// Blocks under kMinBytes are not kept (glibc's heap reuses those already).
// A kept block has its last user's bytes: like malloc's, a new block's
// contents are unspecified. Thread-safe.
#pragma once
#include <cstddef>
#include <map>
#include <mutex>

namespace symmflow {

class BlockCache {
 public:
  static constexpr size_t kMinBytes = size_t(1) << 20;

  explicit BlockCache(size_t limit_bytes) : limit_(limit_bytes) {}
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;
  // Frees every kept block.
  ~BlockCache();

  struct Block {
    void* p = nullptr;
    size_t bytes = 0;  // its true size: what give() must be told when it comes back
  };
  // A kept block of at least `bytes` and at most bytes + bytes / 8 (the
  // smallest such), removed from the cache; {nullptr, 0} when there is none or
  // `bytes` < kMinBytes.
  Block take(size_t bytes);
  // Keeps `p` (a block of `bytes` from std::aligned_alloc or malloc) when
  // bytes >= kMinBytes and bytes <= the limit, first freeing the largest kept
  // blocks until it fits; false when it keeps nothing (the caller frees p).
  bool give(void* p, size_t bytes);

  size_t bytes() const;   // kept now
  size_t blocks() const;  // kept now
  size_t limit() const { return limit_; }

 private:
  const size_t limit_;
  mutable std::mutex mu_;
  std::multimap<size_t, void*> kept_;  // by size
  size_t bytes_ = 0;
};

// The regular allocator's cache: SYMMFLOW_ALLOC_CACHE bytes (256M unless set;
// 0: off; off by default under AddressSanitizer, so a use after free stays
// visible). Never destroyed: storages may die during static destruction.
BlockCache& regular_block_cache();

}  // namespace symmflow
