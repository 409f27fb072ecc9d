#include "symmflow/exec/arenas.h"

#include <fmt/format.h>

#include <cstring>

#include "symmflow/passes/memory_plan.h"
#include "symmflow/runtime/collectives/collectives.h"
#include "symmflow/runtime/world.h"

namespace symmflow::exec {

namespace {

constexpr unsigned char kSentinel = 0xA5;

// A slice of a symmetric storage is symmetric too: its heap offset and its
// peers' copies are the parent's, shifted.
class SliceRegion final : public SymmetricRegion {
 public:
  SliceRegion(std::shared_ptr<Storage> parent, size_t offset) : parent_(std::move(parent)), offset_(offset) {}
  const std::string& group_name() const override { return parent_->symmetric()->group_name(); }
  int rank() const override { return parent_->symmetric()->rank(); }
  int world_size() const override { return parent_->symmetric()->world_size(); }
  size_t heap_offset() const override { return parent_->symmetric()->heap_offset() + offset_; }
  void* peer_ptr(int peer) const override {
    char* p = static_cast<char*>(parent_->symmetric()->peer_ptr(peer));
    return p ? p + offset_ : nullptr;
  }

 private:
  std::shared_ptr<Storage> parent_;
  size_t offset_;
};

std::shared_ptr<Storage> slice(const std::shared_ptr<Storage>& arena, int64_t off, int64_t bytes) {
  char* data = static_cast<char*>(arena->data()) + off;
  std::shared_ptr<SymmetricRegion> region;
  if (arena->is_symmetric()) region = std::make_shared<SliceRegion>(arena, size_t(off));
  // The slice keeps the arena alive; freeing is the arena's business.
  return std::make_shared<Storage>(data, size_t(bytes), [arena](void*) {}, region);
}

// The symmetric buffers in plan order, as (born order) "name: bytes at offset".
std::vector<std::string> symmetric_entries(const ir::Graph& g) {
  std::vector<std::string> out;
  auto add = [&](const ir::Value* v) {
    auto it = g.plan().slots.find(v->id());
    if (it != g.plan().slots.end() && it->second.arena == ir::Arena::symmetric)
      out.push_back(fmt::format("%{} ({} bytes at +{})", v->name(), it->second.bytes, it->second.offset));
  };
  for (const ir::Value* in : g.inputs()) add(in);
  for (const ir::Node* n : g.nodes())
    for (const ir::Value* o : n->outputs()) add(o);
  return out;
}

}  // namespace

void check_plan_across_ranks(const ir::Graph& g) {
  if (!dist::is_initialized() || dist::world().size() == 1) return;
  auto& world = dist::world();
  const int w = world.size();
  // Round 1: (hash, symmetric bytes, buffer count) from every rank.
  auto entries = symmetric_entries(g);
  Tensor mine = Tensor::empty({3}, DType::i64);
  mine.data<int64_t>()[0] = int64_t(g.plan().symmetric_hash);
  mine.data<int64_t>()[1] = g.plan().arena_bytes[1];
  mine.data<int64_t>()[2] = int64_t(entries.size());
  Tensor all = Tensor::empty({3 * w}, DType::i64);
  dist::all_gather(world, all, mine);
  const int64_t* a = all.data<int64_t>();
  bool same = true;
  for (int r = 1; r < w; ++r) same &= std::memcmp(a, a + 3 * r, 3 * sizeof(int64_t)) == 0;
  if (same) return;
  // Round 2: every rank's buffer list, to name the first difference.
  int64_t most = 0;
  for (int r = 0; r < w; ++r) most = std::max(most, a[3 * r + 2]);
  const int64_t width = 96;
  Tensor text = Tensor::empty({(most + 1) * width}, DType::i32);
  std::memset(text.data_ptr(), 0, text.nbytes());
  auto put = [&](int64_t i, const std::string& s) {
    auto* p = reinterpret_cast<char*>(text.data<int32_t>() + i * width);
    std::memcpy(p, s.data(), std::min<size_t>(s.size(), size_t(width * 4 - 1)));
  };
  for (size_t i = 0; i < entries.size(); ++i) put(int64_t(i), entries[i]);
  put(most, fmt::format("symmetric arena {} bytes", g.plan().arena_bytes[1]));
  Tensor texts = Tensor::empty({w * (most + 1) * width}, DType::i32);
  dist::all_gather(world, texts, text);
  auto entry = [&](int r, int64_t i) {
    const char* p = reinterpret_cast<const char*>(texts.data<int32_t>() + (r * (most + 1) + i) * width);
    std::string s(p, strnlen(p, size_t(width * 4)));
    return s.empty() ? std::string("(no buffer)") : s;
  };
  for (int r = 1; r < w; ++r)
    for (int64_t i = 0; i <= most; ++i)
      if (entry(0, i) != entry(r, i))
        throw Error(fmt::format(
            "compiled program @{}: the ranks planned different symmetric memory (did they trace different "
            "programs?): symmetric buffer {} is {} on rank 0 but {} on rank {}; nothing has run",
            g.name(), i, entry(0, i), entry(r, i), r));
  throw Error(fmt::format("compiled program @{}: the ranks' symmetric plans differ (hash {:x} on rank {})",
                          g.name(), uint64_t(g.plan().symmetric_hash), world.rank()));
}

ProgramArenas::ProgramArenas(const ir::Graph& g) : plan_(g.plan().slots) {
  const auto& plan = g.plan();
  check_plan_across_ranks(g);
  if (plan.arena_bytes[0] > 0) regular_ = regular_allocator().allocate(size_t(plan.arena_bytes[0]));
  if (plan.arena_bytes[1] > 0) {
    SF_CHECK(dist::is_initialized(), "compiled program @{} needs {} bytes of symmetric memory: call dist::init() first",
             g.name(), plan.arena_bytes[1]);
    // One collective allocation for the program's whole life.
    symmetric_ = dist::world().heap().allocate(size_t(plan.arena_bytes[1]));
  }
  for (const auto& [id, s] : plan.slots)
    slots_[id] = slice(s.arena == ir::Arena::symmetric ? symmetric_ : regular_, s.offset, s.bytes);
}

std::shared_ptr<Storage> ProgramArenas::storage(int value_id) const {
  auto it = slots_.find(value_id);
  return it == slots_.end() ? nullptr : it->second;
}

int64_t ProgramArenas::bytes(ir::Arena a) const {
  const auto& s = a == ir::Arena::regular ? regular_ : symmetric_;
  return s ? int64_t(s->nbytes()) : 0;
}

const void* ProgramArenas::base(ir::Arena a) const {
  const auto& s = a == ir::Arena::regular ? regular_ : symmetric_;
  return s ? s->data() : nullptr;
}

void ProgramArenas::arm_sentinels(const std::vector<int>& ids) {
  for (int id : ids) {
    auto& st = slots_.at(id);
    std::memset(static_cast<char*>(st->data()) + st->nbytes(), kSentinel, passes::kSentinelBytes);
  }
}

void ProgramArenas::check_sentinels(const std::vector<int>& ids, const ir::Graph& g) const {
  for (int id : ids) {
    const auto& st = slots_.at(id);
    const auto* p = static_cast<const unsigned char*>(st->data()) + st->nbytes();
    for (int64_t i = 0; i < passes::kSentinelBytes; ++i)
      SF_CHECK(p[i] == kSentinel,
               "compiled program @{}: a write ran past the end of %{} ({} bytes): its sentinel byte {} is {:#x}",
               g.name(), g.value(size_t(id))->name(), st->nbytes(), i, p[i]);
  }
}

std::shared_ptr<Storage> PlannedAllocator::allocate(size_t nbytes) {
  if (!results_.empty() && results_.front().nbytes == nbytes) {
    auto s = std::move(results_.front().planned);
    results_.pop_front();
    if (s) return s;
  }
  return fallback_.allocate(nbytes);
}

}  // namespace symmflow::exec
