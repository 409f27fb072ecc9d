#include "symmflow/core/storage.h"

#include <cstdlib>

#include "symmflow/core/block_cache.h"
#include "symmflow/core/error.h"

namespace symmflow {

Storage::Storage(void* data, size_t nbytes, Deleter deleter,
                 std::shared_ptr<SymmetricRegion> symmetric)
    : data_(data), nbytes_(nbytes), deleter_(std::move(deleter)), symmetric_(std::move(symmetric)) {}

Storage::~Storage() {
  if (deleter_) deleter_(data_);
}

void* Storage::peer_ptr(int peer, size_t byte_offset) const {
  if (!symmetric_) return nullptr;
  char* base = static_cast<char*>(symmetric_->peer_ptr(peer));
  return base ? base + byte_offset : nullptr;
}

namespace {

class RegularAllocator final : public Allocator {
 public:
  std::shared_ptr<Storage> allocate(size_t nbytes) override {
    // aligned_alloc wants a multiple of the alignment; never allocate 0 bytes.
    // Up to one cache line, plain malloc (16-byte aligned, enough for any element
    // and any unaligned vector load): glibc's aligned path costs a tiny eager op
    // about a fifth of its time, for data that fits one line either way.
    size_t rounded = (nbytes + 63) / 64 * 64;
    if (rounded == 0) rounded = 64;
    if (rounded >= BlockCache::kMinBytes) return large(nbytes, rounded);
    void* p = rounded == 64 ? std::malloc(64) : std::aligned_alloc(64, rounded);
    SF_CHECK(p != nullptr, "out of memory: could not allocate {} bytes", nbytes);
    return std::make_shared<Storage>(p, nbytes, [](void* q) { std::free(q); });
  }

 private:
  // From the block cache when it keeps one of about this size (block_cache.h:
  // a fresh mapping's pages are faulted in again on every first touch), and
  // back into it when the storage dies.
  static std::shared_ptr<Storage> large(size_t nbytes, size_t rounded) {
    BlockCache& cache = regular_block_cache();
    BlockCache::Block b = cache.take(rounded);
    if (b.p == nullptr) b = {std::aligned_alloc(64, rounded), rounded};
    SF_CHECK(b.p != nullptr, "out of memory: could not allocate {} bytes", nbytes);
    return std::make_shared<Storage>(b.p, nbytes, [&cache, size = b.bytes](void* q) {
      if (!cache.give(q, size)) std::free(q);
    });
  }
};

thread_local Allocator* tls_allocator = nullptr;

}  // namespace

Allocator& regular_allocator() {
  static RegularAllocator a;
  return a;
}

Allocator& current_allocator() { return tls_allocator ? *tls_allocator : regular_allocator(); }

AllocatorGuard::AllocatorGuard(Allocator& a) : previous_(tls_allocator) { tls_allocator = &a; }
AllocatorGuard::~AllocatorGuard() { tls_allocator = previous_; }

}  // namespace symmflow
