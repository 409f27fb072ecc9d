#include "symmflow/runtime/symmetric_heap.h"

#include <algorithm>

#include "symmflow/core/error.h"
#include "symmflow/runtime/shm/group_segment.h"
#include "symmflow/runtime/shm/wait.h"

namespace symmflow::dist {

using runtime::HeapRecord;

namespace {

constexpr size_t kSmallAlign = 64;
constexpr size_t kLargeAlign = 4096;
constexpr size_t kLargeThreshold = 64 * 1024;
constexpr uint64_t kAlloc = 1, kFree = 2;

size_t round_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

std::string describe(uint64_t kind, uint64_t size, uint64_t offset) {
  if (kind == kAlloc) return fmt::format("allocate({} bytes) -> offset {}", size, offset);
  if (kind == kFree) return fmt::format("free(offset {}, {} bytes)", offset, size);
  return "nothing";
}

}  // namespace

struct SymmetricHeap::State {
  std::shared_ptr<runtime::GroupSegment> seg;
  int rank;
  std::string group;
  runtime::LivenessCheck* liveness;
  bool checked;

  mutable std::mutex mu;
  std::map<size_t, size_t> free_blocks;  // offset -> length, coalesced
  std::map<size_t, size_t> live;         // offset -> rounded length
  size_t in_use = 0, high = 0;
  uint64_t seq = 0;           // operations logged so far
  uint64_t verified = 0;      // last sequence compared with rank 0

  void log(uint64_t kind, size_t size, size_t offset) {
    ++seq;
    if (!checked) return;
    auto& ring = seg->check_ring(rank);
    HeapRecord& r = ring.rec[seq % runtime::kCheckRing];
    r.kind = kind;
    r.size = size;
    r.offset = offset;
    r.seq.store(seq, std::memory_order_release);
    ring.published.store(seq, std::memory_order_release);
    runtime::notify(seg->check_wake());
  }

  // Compares my log from verified+1..seq with rank 0's, as far as rank 0 has
  // got, then waits for rank 0 to publish more. Comparing before waiting matters:
  // when the sequences diverge, rank 0 may never reach our sequence number.
  void verify() {
    if (!checked || rank == 0) return;
    auto& mine = seg->check_ring(rank);
    auto& root = seg->check_ring(0);
    const uint64_t target = seq;
    uint64_t s = std::max(verified + 1, target > runtime::kCheckRing ? target - runtime::kCheckRing + 1 : 1);
    for (;;) {
      uint64_t root_at = root.published.load(std::memory_order_acquire);
      for (; s <= std::min(root_at, target); ++s) compare(mine.rec[s % runtime::kCheckRing],
                                                           root.rec[s % runtime::kCheckRing], s);
      if (root_at >= target) break;
      auto ready = [&] { return root.published.load(std::memory_order_acquire) > root_at; };
      runtime::WaitSite site{"symmetric heap check", "", group, rank, 0};
      const HeapRecord& last = mine.rec[target % runtime::kCheckRing];
      runtime::wait_slow(ready, seg->check_wake(), site, liveness, [&] {
        return fmt::format("rank {} is at heap operation #{} ({}), rank 0 has done only {} "
                           "operations (does rank 0 make this allocation?)",
                           rank, target, describe(last.kind, last.size, last.offset),
                           root.published.load());
      });
    }
    verified = target;
  }

  void compare(const HeapRecord& a, const HeapRecord& b, uint64_t s) {
    if (b.seq.load(std::memory_order_acquire) != s) return;  // rank 0 ran a ring ahead
    if (a.kind != b.kind || a.size != b.size || a.offset != b.offset) {
      fail("checked symmetric heap of group '{}': heap operation #{} differs between ranks: "
           "rank {} did {} but rank 0 did {}. Every rank must make the same sequence of "
           "symmetric allocations and frees (same sizes, same order).",
           group, s, rank, describe(a.kind, a.size, a.offset), describe(b.kind, b.size, b.offset));
    }
  }

  size_t carve(size_t nbytes) {
    const size_t align = nbytes >= kLargeThreshold ? kLargeAlign : kSmallAlign;
    const size_t len = round_up(std::max<size_t>(nbytes, 1), align);
    for (auto it = free_blocks.begin(); it != free_blocks.end(); ++it) {
      size_t off = it->first, end = off + it->second;
      size_t start = round_up(off, align);
      if (start + len > end) continue;
      free_blocks.erase(it);
      if (start > off) free_blocks.emplace(off, start - off);
      if (start + len < end) free_blocks.emplace(start + len, end - start - len);
      live.emplace(start, len);
      in_use += len;
      high = std::max(high, start + len);
      return start;
    }
    size_t largest = 0;
    for (auto& [o, l] : free_blocks) largest = std::max(largest, l);
    fail("symmetric heap of group '{}' (rank {}) is out of memory: asked for {} bytes, {} bytes "
         "in use of {} per rank, largest free block {} bytes (raise SYMMFLOW_SYMM_HEAP_BYTES)",
         group, rank, nbytes, in_use, seg->capacity(), largest);
  }

  void release(size_t off) {
    std::lock_guard<std::mutex> lock(mu);
    auto it = live.find(off);
    if (it == live.end()) return;  // cannot happen: storages free once
    size_t len = it->second;
    live.erase(it);
    in_use -= len;
    log(kFree, len, off);
    insert_free(off, len);
  }

  void insert_free(size_t off, size_t len) {
    auto next = free_blocks.lower_bound(off);
    if (next != free_blocks.end() && off + len == next->first) {
      len += next->second;
      next = free_blocks.erase(next);
    }
    if (next != free_blocks.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == off) {
        prev->second += len;
        return;
      }
    }
    free_blocks.emplace(off, len);
  }
};

struct SymmetricHeap::View {
  std::string group;
  int rank;
  std::vector<int> local_of;  // group rank -> index in the segment, -1: another node
};

namespace {

class HeapRegion final : public SymmetricRegion {
 public:
  HeapRegion(std::shared_ptr<SymmetricHeap::State> st, std::shared_ptr<const SymmetricHeap::View> v,
             size_t offset)
      : st_(std::move(st)), v_(std::move(v)), offset_(offset) {}
  const std::string& group_name() const override { return v_->group; }
  int rank() const override { return v_->rank; }
  int world_size() const override { return int(v_->local_of.size()); }
  size_t heap_offset() const override { return offset_; }
  void* peer_ptr(int peer) const override {
    SF_CHECK(peer >= 0 && peer < world_size(),
             "peer_ptr: expected a rank of group '{}' in [0, {}), found {}", v_->group,
             world_size(), peer);
    const int li = v_->local_of[size_t(peer)];
    return li < 0 ? nullptr : st_->seg->heap_base(li) + offset_;
  }

 private:
  std::shared_ptr<SymmetricHeap::State> st_;
  std::shared_ptr<const SymmetricHeap::View> v_;
  size_t offset_;
};

class HeapAllocator final : public Allocator {
 public:
  explicit HeapAllocator(SymmetricHeap* h) : h_(h) {}
  std::shared_ptr<Storage> allocate(size_t nbytes) override { return h_->allocate(nbytes); }

 private:
  SymmetricHeap* h_;
};

}  // namespace

SymmetricHeap::SymmetricHeap(std::shared_ptr<runtime::GroupSegment> seg, int rank,
                             std::vector<int> local_of, std::string group_name,
                             runtime::LivenessCheck* liveness, bool checked)
    : state_(std::make_shared<State>()), allocator_(std::make_unique<HeapAllocator>(this)) {
  SF_CHECK(rank >= 0 && size_t(rank) < local_of.size() && local_of[size_t(rank)] >= 0,
           "symmetric heap of group '{}': rank {} is not on this node", group_name, rank);
  state_->seg = std::move(seg);
  state_->rank = local_of[size_t(rank)];
  state_->group = group_name;
  state_->liveness = liveness;
  state_->checked = checked;
  state_->free_blocks.emplace(0, state_->seg->capacity());
  view_ = std::make_shared<View>(View{std::move(group_name), rank, std::move(local_of)});
}

std::unique_ptr<SymmetricHeap> SymmetricHeap::node_view(std::string group_name) const {
  std::unique_ptr<SymmetricHeap> h(new SymmetricHeap());
  h->state_ = state_;
  h->allocator_ = std::make_unique<HeapAllocator>(h.get());
  std::vector<int> identity(size_t(state_->seg->size()));
  for (size_t i = 0; i < identity.size(); ++i) identity[i] = int(i);
  h->view_ = std::make_shared<View>(View{std::move(group_name), state_->rank, std::move(identity)});
  return h;
}

SymmetricHeap::~SymmetricHeap() {
  if (!state_) return;
  // Storages may outlive the group: their frees must not wait on peers then.
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->liveness = nullptr;
  state_->checked = false;
}

std::shared_ptr<Storage> SymmetricHeap::allocate(size_t nbytes) {
  size_t off;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    off = state_->carve(nbytes);
    state_->log(kAlloc, state_->live[off], off);
    try {
      state_->verify();
    } catch (...) {
      // Leave the heap as it was (the log keeps the failed request; the job is failing).
      size_t len = state_->live[off];
      state_->live.erase(off);
      state_->in_use -= len;
      state_->insert_free(off, len);
      throw;
    }
  }
  auto st = state_;
  return std::make_shared<Storage>(state_->seg->heap_base(state_->rank) + off, nbytes,
                                   [st, off](void*) { st->release(off); },
                                   std::make_shared<HeapRegion>(state_, view_, off));
}

Allocator& SymmetricHeap::allocator() { return *allocator_; }
int SymmetricHeap::rank() const { return view_->rank; }
int SymmetricHeap::size() const { return int(view_->local_of.size()); }
size_t SymmetricHeap::capacity() const { return state_->seg->capacity(); }
char* SymmetricHeap::local_base() const { return state_->seg->heap_base(state_->rank); }
char* SymmetricHeap::peer_base(int peer) const {
  const int li = view_->local_of.at(size_t(peer));
  return li < 0 ? nullptr : state_->seg->heap_base(li);
}

size_t SymmetricHeap::bytes_in_use() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->in_use;
}
size_t SymmetricHeap::live_allocations() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->live.size();
}
size_t SymmetricHeap::high_water() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->high;
}
uint64_t SymmetricHeap::operations() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->seq;
}
bool SymmetricHeap::checked() const { return state_->checked; }
void SymmetricHeap::set_checked(bool on) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->checked = on;
  state_->verified = state_->seq;  // only what is logged from now on is compared
}

}  // namespace symmflow::dist
