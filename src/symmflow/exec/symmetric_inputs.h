// SymmetricInputCheck: a caller's symmetric tensor is used in place, so it must
// sit where the plan's own buffer would: at the same offset of the same group's
// heap on every rank (a symmetric buffer's peers are addressed by its offset: a
// plugin's peer_ptr(), the plan hash compared at load). The load-time check
// (check_plan_across_ranks) covers the planned buffers; this one covers what a
// run binds instead of them.
//
// Once per signature: each run folds the plan hash and the offset of every
// graph input a collective uses (the caller's tensor, or the planned buffer a
// regular input is copied into) into one signature. Only when it differs from
// the last one the ranks agreed on do they compare (one all_gather of 8 bytes;
// a second round only to name a difference). A caller who passes the same
// symmetric tensors every run pays once; one who passes regular tensors never
// (their buffers were checked at load).
//
//   SymmetricInputCheck check(graph, arenas);
//   bind the inputs into env;  check.run(graph, env);   // may throw, on every rank
//
// Inputs that only P2P uses are not compared: every transfer announces its
// buffer's offset (runtime/p2p), so they may differ between ranks, as they do
// between ranks that run different code.
//
// Ranks whose collective buffers are graph inputs in different places (ranks
// that run different code: an input on one rank, an intermediate on another)
// are told so at load (check_plan_across_ranks) and skip the check: they could
// not decide alike when to compare. When only some ranks' signatures change,
// their offsets now differ from the others' (which kept the agreed ones):
// those ranks enter the exchange alone and the runtime reports the unmatched
// collective (or the deadlock detector the stalled wait) within a second, on
// every rank.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "symmflow/core/ivalue.h"
#include "symmflow/exec/arenas.h"
#include "symmflow/ir/graph.h"

namespace symmflow::exec {

class SymmetricInputCheck {
 public:
  SymmetricInputCheck(const ir::Graph& g, const ProgramArenas& arenas);
  // `env`: the run's values by id, inputs bound. Throws an Error naming the
  // input, the op that uses it, both ranks' offsets and the remedy.
  void run(const ir::Graph& g, const std::vector<IValue>& env);
  // How many times the ranks compared (tests: once per signature).
  int64_t exchanges() const { return exchanges_; }

  // Where a bound tensor's first byte sits: its group's heap and the offset in it.
  struct Where {
    std::string group;
    int64_t offset = -1;  // -1: not symmetric
  };

 private:
  struct Input {
    int value_id;   // the graph input
    size_t entry;   // its plan().collective_buffers entry
  };
  std::vector<Where> bound(const std::vector<IValue>& env) const;
  uint64_t signature(const ir::Graph& g, const std::vector<Where>& at) const;
  std::vector<Input> inputs_;
  uint64_t agreed_ = 0;  // the signature every rank last agreed on
  int64_t exchanges_ = 0;
};

}  // namespace symmflow::exec
