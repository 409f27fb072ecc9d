#include "symmflow/ir/rank_set.h"

#include <fmt/format.h>

namespace symmflow::ir {

bool RankSet::contains(int64_t rank, int64_t world) const {
  for (const Item& i : items) {
    const int64_t a = i.first->eval(0, world), b = i.last ? i.last->eval(0, world) : a;
    if (a <= rank && rank <= b) return true;
  }
  return false;
}

int64_t RankSet::first_rank(int64_t world) const {
  for (int64_t r = 0; r < world; ++r)
    if (contains(r, world)) return r;
  return -1;
}

std::string RankSet::str() const {
  std::vector<std::string> parts;
  for (const Item& i : items)
    parts.push_back(i.last ? i.first->to_string() + ".." + i.last->to_string() : i.first->to_string());
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace symmflow::ir
