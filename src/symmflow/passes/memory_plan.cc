#include "symmflow/passes/memory_plan.h"

#include <algorithm>
#include <limits>
#include <functional>
#include <map>
#include <queue>
#include <tuple>
#include <unordered_map>

#include "symmflow/core/hash.h"
#include "symmflow/ir/alias.h"
#include "symmflow/passes/comm_ops.h"
#include "symmflow/passes/symm_placement.h"

namespace symmflow::passes {

using ir::Arena;
using ir::Value;

namespace {

constexpr size_t kEnd = std::numeric_limits<size_t>::max();

int64_t align(int64_t n) { return (n + kBufferAlign - 1) / kBufferAlign * kBufferAlign; }

// First-fit over one arena, in program order.
class ArenaPacker {
 public:
  int64_t take(int64_t bytes) {
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->second < bytes) continue;
      int64_t off = it->first, size = it->second;
      free_.erase(it);
      if (size > bytes) free_[off + bytes] = size - bytes;
      return off;
    }
    // Grow at the end (merging a free block that ends there).
    int64_t off = top_;
    if (!free_.empty()) {
      auto last = std::prev(free_.end());
      if (last->first + last->second == top_) {
        off = last->first;
        free_.erase(last);
      }
    }
    top_ = off + bytes;
    return off;
  }
  void give_back(int64_t off, int64_t bytes) {
    auto [it, ok] = free_.emplace(off, bytes);
    // Coalesce with the neighbours.
    if (auto next = std::next(it); next != free_.end() && off + bytes == next->first) {
      it->second += next->second;
      free_.erase(next);
    }
    if (it != free_.begin()) {
      auto prev = std::prev(it);
      if (prev->first + prev->second == it->first) {
        prev->second += it->second;
        free_.erase(it);
      }
    }
  }
  int64_t peak() const { return top_; }

 private:
  std::map<int64_t, int64_t> free_;  // offset -> bytes
  int64_t top_ = 0;
};

}  // namespace

bool MemoryPlanning::run(ir::Graph& g) {
  auto& plan = g.plan();
  plan.slots.clear();
  auto roots = ir::storage_roots(g);
  const auto& nodes = g.nodes();

  // Rule 1: the last read of every storage; outputs are read "at the end".
  std::vector<size_t> last(g.num_values(), 0);
  for (size_t p = 0; p < nodes.size(); ++p)
    for (const auto& a : nodes[p]->args())
      a.for_each_value([&](Value* v) {
        if (Value* r = roots[size_t(v->id())]) last[size_t(r->id())] = std::max(last[size_t(r->id())], p + 1);
      });
  for (const Value* v : g.outputs())
    if (Value* r = roots[size_t(v->id())]) last[size_t(r->id())] = kEnd;
  // Rule 6: what an asynchronous op reads or writes stays live until its last wait.
  {
    for (const auto& [start, waits] : async_pairs(g).waits_of) {
      size_t until = 0;
      for (const ir::Node* w : waits) until = std::max(until, g.position(w) + 1);
      for (const auto& a : start->args())
        a.for_each_value([&](Value* v) {
          if (Value* r = roots[size_t(v->id())]) last[size_t(r->id())] = std::max(last[size_t(r->id())], until);
        });
    }
  }

  struct Buffer {
    Value* root;
    size_t born, dies;
  };
  std::vector<Buffer> buffers;
  for (Value* in : g.inputs())
    if (in->is_tensor() && in->symmetric())  // rule 5: copied back at the end when written
      buffers.push_back({in, 0, kEnd});
  for (size_t p = 0; p < nodes.size(); ++p) {
    const ir::Node* n = nodes[p];
    for (Value* o : n->outputs()) {
      if (roots[size_t(o->id())] != o) continue;  // a view or an in-place result
      const bool scoped = o->symmetric() && (!is_builtin_op(*n) || n->functional());
      const bool returned = last[size_t(o->id())] == kEnd;
      if ((returned && !o->symmetric()) || n->functional() || scoped || o->type().storage_bytes() == 0) continue;
      buffers.push_back({o, p + 1, std::max(last[size_t(o->id())], p + 1)});
    }
  }

  // Rule 7: which symmetric buffers a collective takes, each named by the first one.
  std::unordered_map<const Value*, std::pair<int, int>> collective_of;  // root -> (collective, operand)
  int collectives = 0;
  for (const ir::Node* n : nodes) {
    const CommKind k = comm_kind(*n);
    if (k != CommKind::collective && k != CommKind::effect) continue;
    int operand = 0;
    auto note = [&](Value* v) {
      if (Value* r = roots[size_t(v->id())]; r && r->symmetric()) collective_of.try_emplace(r, collectives, operand);
      ++operand;
    };
    for (const auto& a : n->args()) a.for_each_value(note);
    for (Value* o : n->outputs()) note(o);
    ++collectives;
  }

  // Rule 3: in program order, free then take; each arena (and region) on its own.
  // The buffers that die before a buffer is born are given back in any order:
  // the packer coalesces every free neighbour, so its free list after a batch
  // does not depend on the order (a min-heap by death, not a node-per-entry multimap).
  plan.slots.reserve(buffers.size());
  auto pack = [&](ir::Arena arena, bool collective_region, int64_t base) {
    ArenaPacker packer;
    using Dying = std::pair<size_t, int>;  // (dies, root id)
    std::priority_queue<Dying, std::vector<Dying>, std::greater<>> dying;
    for (const Buffer& b : buffers) {
      if ((b.root->symmetric() ? ir::Arena::symmetric : ir::Arena::regular) != arena) continue;
      if (arena == ir::Arena::symmetric && collective_of.count(b.root) != size_t(collective_region)) continue;
      for (; !dying.empty() && dying.top().first < b.born; dying.pop()) {
        const auto& slot = plan.slots[dying.top().second];
        packer.give_back(slot.offset - base, align(slot.bytes + (sentinels_ ? kSentinelBytes : 0)));
      }
      const int64_t bytes = b.root->type().storage_bytes();
      const int64_t off = base + packer.take(align(bytes + (sentinels_ ? kSentinelBytes : 0)));
      plan.slots[b.root->id()] = ir::BufferSlot{arena, off, bytes};
      dying.emplace(b.dies, b.root->id());
    }
    return base + packer.peak();
  };
  plan.arena_bytes[0] = pack(ir::Arena::regular, false, 0);
  plan.collective_bytes = pack(ir::Arena::symmetric, true, 0);
  plan.arena_bytes[1] = pack(ir::Arena::symmetric, false, plan.collective_bytes);

  // The collective region, in collective order, and its hash (what every rank must agree on).
  plan.collective_buffers.clear();
  for (const auto& [root, at] : collective_of)
    if (auto it = plan.slots.find(root->id()); it != plan.slots.end())  // scoped results are not planned
      plan.collective_buffers.push_back({root->id(), at.first, at.second, it->second.offset, it->second.bytes});
  std::sort(plan.collective_buffers.begin(), plan.collective_buffers.end(), [](const auto& a, const auto& b) {
    return std::tie(a.collective, a.operand) < std::tie(b.collective, b.operand);
  });
  uint64_t hash = kFnv1aBasis;
  for (const auto& c : plan.collective_buffers)
    hash = fnv1a_int(fnv1a_int(fnv1a_int(fnv1a_int(hash, c.collective), c.operand), c.offset), c.bytes);
  plan.symmetric_hash = fnv1a_int(hash, plan.collective_bytes);
  plan.sentinels = sentinels_;
  plan.planned = true;
  return true;
}

}  // namespace symmflow::passes
