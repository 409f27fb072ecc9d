#include "symmflow/runtime/shm/group_segment.h"

#include <algorithm>
#include <cstring>

#include "symmflow/core/error.h"

namespace symmflow::runtime {

namespace {

constexpr uint64_t kGroupMagic = 0x31505247424d5953ull;  // "SYMBGRP1"
constexpr size_t kHeapAlign = size_t(2) << 20;            // huge-page friendly

size_t round_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

struct Layout {
  size_t slots, wakes, rings, check_wake, pairs, pair_stride, heap, total;
};

Layout layout(int w, size_t capacity, PairRegion pairs) {
  Layout l{};
  size_t at = round_up(sizeof(GroupHeader), 64);
  l.slots = at;
  at = round_up(at + size_t(w) * w * kChannels * sizeof(uint64_t), 64);
  l.wakes = at;
  at += size_t(w) * sizeof(WakeWord);
  l.rings = round_up(at, 64);
  at = l.rings + size_t(w) * sizeof(HeapCheckRing);
  l.check_wake = round_up(at, 64);
  at = l.check_wake + sizeof(WakeWord);
  l.pairs = round_up(at, pairs.align);
  l.pair_stride = round_up(pairs.block_bytes, pairs.align);
  at = l.pairs + size_t(w) * w * l.pair_stride;
  l.heap = round_up(at, kHeapAlign);
  l.total = l.heap + size_t(w) * capacity;
  return l;
}

}  // namespace

void GroupSegment::bind(int size, size_t capacity, PairRegion pairs) {
  Layout l = layout(size, capacity, pairs);
  char* base = static_cast<char*>(seg_.data());
  size_ = size;
  capacity_ = capacity;
  slots_ = reinterpret_cast<std::atomic<uint64_t>*>(base + l.slots);
  wakes_ = reinterpret_cast<WakeWord*>(base + l.wakes);
  rings_ = reinterpret_cast<HeapCheckRing*>(base + l.rings);
  check_wake_ = reinterpret_cast<WakeWord*>(base + l.check_wake);
  pairs_ = base + l.pairs;
  pair_stride_ = l.pair_stride;
  heap_ = base + l.heap;
}

std::shared_ptr<GroupSegment> GroupSegment::create(dist::Backend& backend, const std::string& name,
                                                   const std::vector<int>& world_ranks,
                                                   size_t capacity, PairRegion pairs) {
  SF_CHECK(pairs.align > 0 && (pairs.align & (pairs.align - 1)) == 0,
           "group '{}': pair region alignment {} is not a power of two", name, pairs.align);
  SF_CHECK(!world_ranks.empty(), "group '{}': expected at least one rank", name);
  SF_CHECK(name.size() < 64, "group name '{}' is longer than 63 characters", name);
  capacity = round_up(std::max<size_t>(capacity, 4096), kHeapAlign);
  const int me = backend.rank();
  const bool member = std::find(world_ranks.begin(), world_ranks.end(), me) != world_ranks.end();
  // The members on my node, in group order: the segment holds their heaps only.
  std::vector<int> local;
  for (int r : world_ranks)
    if (backend.node_of(r) == backend.node_of(me)) local.push_back(r);
  const int w = int(local.size());
  const int leader = local.empty() ? -1 : local[0];

  auto g = member ? std::make_shared<GroupSegment>() : nullptr;
  std::string published;
  if (member && me == leader) {
    // Zero-filled by ftruncate: every counter and sequence number starts at 0.
    g->seg_ = ShmSegment::create(backend.job_id(), "grp", layout(w, capacity, pairs).total);
    auto* h = static_cast<GroupHeader*>(g->seg_.data());
    h->magic = kGroupMagic;
    h->size = w;
    h->capacity = capacity;
    std::snprintf(h->name, sizeof h->name, "%s", name.c_str());
    published = g->seg_.name();
  }
  std::string what = "creating group '" + name + "'";
  auto blobs = backend.all_gather_blob(published, what);
  if (member && me != leader) {
    g->seg_ = ShmSegment::open(blobs[size_t(leader)]);
    auto* h = static_cast<GroupHeader*>(g->seg_.data());
    SF_CHECK(h->magic == kGroupMagic && h->size == w && h->capacity == capacity &&
                 name == h->name,
             "group '{}': segment {} holds group '{}' of {} ranks x {} bytes, expected {} ranks x "
             "{} bytes (do all ranks use the same SYMMFLOW_SYMM_HEAP_BYTES?)",
             name, blobs[size_t(leader)], h->name, h->size, h->capacity, w, capacity);
  }
  // Hygiene: the name disappears as soon as every member has the mapping.
  backend.bootstrap_barrier(what);
  if (member && me == leader) g->seg_.unlink();
  if (g) {
    g->name_ = name;
    g->bind(w, capacity, pairs);
  }
  return g;
}

}  // namespace symmflow::runtime
