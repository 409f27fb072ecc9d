#include "symmflow/passes/memory_plan.h"

#include <algorithm>
#include <limits>
#include <map>

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

uint64_t fnv(uint64_t h, int64_t v) {
  for (int i = 0; i < 8; ++i) {
    h ^= uint64_t(v >> (8 * i)) & 0xff;
    h *= 1099511628211ull;
  }
  return h;
}

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

  // Rule 3: in program order, free then take; each arena on its own.
  ArenaPacker packers[2];
  std::multimap<size_t, std::pair<Value*, int>> dying;  // dies -> (root, arena)
  uint64_t hash = 1469598103934665603ull;
  for (const Buffer& b : buffers) {
    for (auto it = dying.begin(); it != dying.end() && it->first < b.born;) {
      auto [root, arena] = it->second;
      const auto& slot = plan.slots[root->id()];
      packers[arena].give_back(slot.offset, align(slot.bytes + (sentinels_ ? kSentinelBytes : 0)));
      it = dying.erase(it);
    }
    const int arena = b.root->symmetric() ? 1 : 0;
    const int64_t bytes = b.root->type().storage_bytes();
    const int64_t off = packers[arena].take(align(bytes + (sentinels_ ? kSentinelBytes : 0)));
    plan.slots[b.root->id()] = ir::BufferSlot{Arena(arena), off, bytes};
    dying.emplace(b.dies, std::make_pair(b.root, arena));
    if (arena == 1) hash = fnv(fnv(fnv(hash, int64_t(b.born)), off), bytes);
  }
  plan.arena_bytes[0] = packers[0].peak();
  plan.arena_bytes[1] = packers[1].peak();
  plan.symmetric_hash = fnv(hash, plan.arena_bytes[1]);
  plan.sentinels = sentinels_;
  plan.planned = true;
  return true;
}

}  // namespace symmflow::passes
