// Pool<T>: where a Graph keeps its nodes and values. Each is made in place in
// the next free slot of a block and lives until the pool (the graph) goes; the
// pool never frees one early, as the graph never did (a removed node stays
// owned: passes may still hold it).
//
// Why not one heap allocation per object: every pass walks every node in
// program order, and most of them each node's values. With one allocation each,
// they sit wherever malloc had a hole (scattered by the meta tensors, argument
// vectors and strings freed in between), and once a graph outgrows the
// last-level cache (about 100k nodes) every step of such a walk is a miss to
// memory and to the TLB. Made in creation order, neighbours in program order are
// neighbours in memory, and one 2 MiB block (a huge page where the kernel grants
// one) holds thousands of them (docs/performance.md, compile time, round 4).
#pragma once
#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <new>
#include <utility>
#include <vector>

namespace symmflow::ir {

template <class T>
class Pool {
 public:
  Pool() = default;
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;
  ~Pool() {
    for (Block& b : blocks_) {
      for (size_t i = 0; i < b.used; ++i) b.items[i].~T();
      std::free(b.items);
    }
  }

  // A new T, default-constructed, at the end of the last block.
  T* make() {
    if (blocks_.empty() || blocks_.back().used == blocks_.back().capacity) grow();
    Block& b = blocks_.back();
    T* p = new (b.items + b.used) T();
    ++b.used;
    return p;
  }

 private:
  static constexpr size_t kHugePage = size_t(2) << 20;
  static_assert(alignof(T) <= alignof(std::max_align_t), "malloc's alignment must do");
  static_assert(sizeof(T) <= kHugePage / 64, "a huge block must hold many");

  struct Block {
    T* items;
    size_t used;
    size_t capacity;
  };

  // Blocks double from 32 objects, so a small graph (a test's, a parsed
  // function's) costs a few KiB; from 2 MiB on each block is one aligned huge
  // page, asked for with madvise (the kernel may decline; then it is 512 pages).
  void grow() {
    const size_t want = blocks_.empty() ? 32 : blocks_.back().capacity * 2;
    void* p = nullptr;
    size_t capacity = want;
    if (want * sizeof(T) >= kHugePage) {
      capacity = kHugePage / sizeof(T);
      p = std::aligned_alloc(kHugePage, kHugePage);
      if (p) madvise(p, kHugePage, MADV_HUGEPAGE);
    } else {
      p = std::malloc(want * sizeof(T));
    }
    if (!p) throw std::bad_alloc();
    blocks_.push_back({static_cast<T*>(p), 0, capacity});
  }

  std::vector<Block> blocks_;
};

}  // namespace symmflow::ir
