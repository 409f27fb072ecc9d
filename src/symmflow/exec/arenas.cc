#include "symmflow/exec/arenas.h"

#include <fmt/format.h>

#include <cstring>

#include "symmflow/core/hash.h"
#include "symmflow/exec/rank_strings.h"
#include "symmflow/ir/comm_ops.h"
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

}  // namespace

std::vector<RegionEntry> collective_region(const ir::Graph& g) {
  std::vector<const ir::Node*> collectives;
  for (const ir::Node* n : g.nodes())
    if (ir::comm_kind(*n) == ir::CommKind::collective || ir::comm_kind(*n) == ir::CommKind::effect)
      collectives.push_back(n);
  std::vector<RegionEntry> out;
  for (const auto& c : g.plan().collective_buffers) {
    const ir::Node* n = collectives.at(size_t(c.collective));
    out.push_back({fmt::format("collective #{} operand {}: {} bytes at +{}", c.collective, c.operand, c.bytes, c.offset),
                   fmt::format("%{} of {} at {}:{}:{}", g.value(size_t(c.value_id))->name(), n->op_name(),
                               g.file().empty() ? "<traced>" : g.file(), n->loc().line, n->loc().col)});
  }
  return out;
}

std::vector<InputBuffer> input_collective_buffers(const ir::Graph& g) {
  std::vector<const ir::Value*> input_of(g.num_values(), nullptr);  // by value id
  for (const ir::Value* in : g.inputs()) input_of[size_t(in->id())] = in;
  std::vector<InputBuffer> out;
  const auto& buffers = g.plan().collective_buffers;
  for (size_t e = 0; e < buffers.size(); ++e)
    if (const ir::Value* in = input_of[size_t(buffers[e].value_id)]) out.push_back({e, in});
  return out;
}

PlanAgreement check_plan_across_ranks(const ir::Graph& g) {
  const auto& plan = g.plan();
  if (!dist::is_initialized() || dist::world().size() == 1) return {plan.arena_bytes[1], true};
  auto& world = dist::world();
  const int w = world.size();
  // Round 1: (hash, collective region bytes, its buffer count, symmetric arena
  // bytes, which of its buffers are graph inputs) from every rank.
  constexpr int kN = 5;
  Tensor mine = Tensor::empty({kN}, DType::i64);
  int64_t* m = mine.data<int64_t>();
  m[0] = int64_t(plan.symmetric_hash), m[1] = plan.collective_bytes;
  m[2] = int64_t(plan.collective_buffers.size()), m[3] = plan.arena_bytes[1];
  uint64_t inputs_hash = kFnv1aBasis;
  for (const InputBuffer& b : input_collective_buffers(g)) inputs_hash = fnv1a_int(inputs_hash, int64_t(b.entry));
  m[4] = int64_t(inputs_hash);
  Tensor all = Tensor::empty({kN * w}, DType::i64);
  dist::all_gather(world, all, mine);
  const int64_t* a = all.data<int64_t>();
  bool same = true, same_inputs = true;
  int64_t largest = 0, most = 0;
  for (int r = 0; r < w; ++r) {
    same &= std::memcmp(a, a + kN * r, 3 * sizeof(int64_t)) == 0;
    same_inputs &= a[kN * r + 4] == a[4];
    largest = std::max(largest, a[kN * r + 3]);
    most = std::max(most, a[kN * r + 2]);
  }
  if (same) return {largest, same_inputs};  // each rank's P2P-only region may differ: every rank allocates the largest arena
  // Round 2: every rank's collective region, to name the first difference.
  std::vector<std::string> keys, whats;
  for (const auto& e : collective_region(g)) keys.push_back(e.key), whats.push_back(e.what);
  keys.push_back(fmt::format("collective region {} bytes", plan.collective_bytes));
  auto all_keys = gather_strings(keys, most + 1), all_whats = gather_strings(whats, most + 1);
  auto shown = [&](int r, size_t i) {
    const std::string& k = all_keys[size_t(r)][i];
    if (k.empty()) return std::string("(no buffer)");
    return all_whats[size_t(r)][i].empty() ? k : fmt::format("{} ({})", k, all_whats[size_t(r)][i]);
  };
  for (int r = 1; r < w; ++r)
    for (size_t i = 0; i <= size_t(most); ++i)
      if (all_keys[0][i] != all_keys[size_t(r)][i])
        throw Error(fmt::format(
            "compiled program @{} (rank {}): the ranks planned different symmetric memory for their collectives "
            "(did they trace different collectives?): symmetric buffer {} is {} on rank 0 but {} on rank {}; "
            "nothing has run. Every rank must issue the same collectives on tensors of the same sizes, each "
            "computed between the same two collectives",
            g.name(), world.rank(), i, shown(0, i), shown(r, i), r));
  throw Error(fmt::format("compiled program @{}: the ranks' symmetric plans differ (hash {:x} on rank {})", g.name(),
                          uint64_t(plan.symmetric_hash), world.rank()));
}

ProgramArenas::ProgramArenas(const ir::Graph& g) : plan_(g.plan().slots) {
  const auto& plan = g.plan();
  const PlanAgreement agreed = check_plan_across_ranks(g);
  const int64_t symmetric_bytes = agreed.symmetric_bytes;
  same_input_buffers_ = agreed.same_input_buffers;
  if (plan.arena_bytes[0] > 0) regular_ = regular_allocator().allocate(size_t(plan.arena_bytes[0]));
  if (symmetric_bytes > 0) {
    SF_CHECK(dist::is_initialized(), "compiled program @{} needs {} bytes of symmetric memory: call dist::init() first",
             g.name(), symmetric_bytes);
    // One collective allocation for the program's whole life, of the same size on every rank.
    symmetric_ = dist::world().heap().allocate(size_t(symmetric_bytes));
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
    std::memset(static_cast<char*>(st->data()) + st->nbytes(), kSentinel, ir::kSentinelBytes);
  }
}

void ProgramArenas::check_sentinels(const std::vector<int>& ids, const ir::Graph& g) const {
  for (int id : ids) {
    const auto& st = slots_.at(id);
    const auto* p = static_cast<const unsigned char*>(st->data()) + st->nbytes();
    for (int64_t i = 0; i < ir::kSentinelBytes; ++i)
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
