// RankSet: the ranks one graph of a program is for, when its ranks run different
// code (pipeline stages). The text IR writes it after the graph's name
// (docs/ir.md, "Programs whose ranks run different code"):
//
//   graph @stage ranks 0 (%x: f32[4, 8]) -> (f32[4, 8]) { ... }           # rank 0
//   graph @stage ranks 1..world-2 (%x: f32[4, 8]) -> (f32[4, 8]) { ... }  # the middle ranks
//   graph @stage ranks world-1 (%x: f32[4, 8]) -> (f32[4, 8]) { ... }     # the last rank
//
// Each item is one rank or a range `a..b` (both ends included; empty when a > b),
// written as integer expressions over `world` (not `rank`).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "symmflow/ir/int_expr.h"

namespace symmflow::ir {

struct RankSet {
  struct Item {
    IntExpr::Ptr first, last;  // last == nullptr: the single rank `first`
  };
  std::vector<Item> items;

  bool contains(int64_t rank, int64_t world) const;
  // The smallest rank in the set in this world, or -1 when it is empty there.
  int64_t first_rank(int64_t world) const;
  std::string str() const;  // "0", "1..world-2", "0, 2"
};

}  // namespace symmflow::ir
