#include "symmflow/exec/symmetric_inputs.h"

#include <fmt/format.h>

#include "symmflow/core/error.h"
#include "symmflow/core/hash.h"
#include "symmflow/exec/rank_strings.h"
#include "symmflow/runtime/collectives/collectives.h"
#include "symmflow/runtime/world.h"

namespace symmflow::exec {

namespace {

using Where = SymmetricInputCheck::Where;

// Where a bound tensor's first byte sits.
Where where(const Storage* s, int64_t byte_offset) {
  const SymmetricRegion* r = s ? s->symmetric() : nullptr;
  if (!r) return {};
  return {r->group_name(), int64_t(r->heap_offset()) + byte_offset};
}
Where where(const Tensor& t) { return where(t.storage().get(), t.storage_offset() * int64_t(t.itemsize())); }

std::string describe(const Where& w) {
  return w.offset < 0 ? std::string("not symmetric") : fmt::format("{}+{}", w.group, w.offset);
}

}  // namespace

SymmetricInputCheck::SymmetricInputCheck(const ir::Graph& g, const ProgramArenas& arenas) {
  // Ranks whose collective buffers are graph inputs in different places (ranks
  // that run different code) could not decide alike when to compare: no check.
  if (!arenas.same_input_buffers()) return;
  std::vector<Where> planned;
  for (const InputBuffer& b : input_collective_buffers(g)) {
    inputs_.push_back({b.input->id(), b.entry});
    const auto& t = b.input->type();
    planned.push_back(where(arenas.storage(b.input->id()).get(), t.offset * int64_t(element_size(t.dtype))));
  }
  // Regular inputs are bound to their planned buffers, which the ranks compared at load.
  agreed_ = signature(g, planned);
}

std::vector<SymmetricInputCheck::Where> SymmetricInputCheck::bound(const std::vector<IValue>& env) const {
  std::vector<Where> out;
  for (const Input& in : inputs_) out.push_back(where(env[size_t(in.value_id)].to_tensor()));
  return out;
}

uint64_t SymmetricInputCheck::signature(const ir::Graph& g, const std::vector<Where>& at) const {
  uint64_t h = fnv1a_int(kFnv1aBasis, int64_t(g.plan().symmetric_hash));
  for (size_t i = 0; i < at.size(); ++i)
    h = fnv1a_int(fnv1a(at[i].group.data(), at[i].group.size(), fnv1a_int(h, int64_t(inputs_[i].entry))), at[i].offset);
  return h;
}

void SymmetricInputCheck::run(const ir::Graph& g, const std::vector<IValue>& env) {
  if (inputs_.empty() || !dist::is_initialized() || dist::world().size() == 1) return;
  const std::vector<Where> at = bound(env);
  const uint64_t mine = signature(g, at);
  if (mine == agreed_) return;
  ++exchanges_;
  auto& world = dist::world();
  Tensor t = Tensor::empty({1}, DType::i64);
  t.data<int64_t>()[0] = int64_t(mine);
  Tensor all = Tensor::empty({world.size()}, DType::i64);
  dist::all_gather(world, all, t);
  bool same = true;
  for (int r = 0; r < world.size(); ++r) same &= all.data<int64_t>()[r] == int64_t(mine);
  if (same) {
    agreed_ = mine;
    return;
  }
  // Round 2: every rank's offsets, to name the first input that differs.
  std::vector<std::string> offsets;
  for (const Where& w : at) offsets.push_back(describe(w));
  const auto every = gather_strings(offsets, int64_t(inputs_.size()));
  const auto region = collective_region(g);
  for (size_t i = 0; i < inputs_.size(); ++i)
    for (int r = 1; r < world.size(); ++r)
      if (every[0][i] != every[size_t(r)][i])
        throw Error(fmt::format(
            "compiled program @{} (rank {}): graph input {} is at symmetric offset {} on rank 0 but {} on rank {}; "
            "nothing has run. A symmetric tensor a collective uses in place must sit at the same offset on every "
            "rank: allocate it with sf::symm::empty in the same order on every rank (the same tensor), or pass a "
            "regular tensor (one counted copy into the program's own buffer)",
            g.name(), world.rank(), region.at(inputs_[i].entry).what, every[0][i], every[size_t(r)][i], r));
  throw Error(fmt::format("compiled program @{} (rank {}): the ranks' symmetric inputs differ (signature {:x})",
                          g.name(), world.rank(), mine));
}

}  // namespace symmflow::exec
