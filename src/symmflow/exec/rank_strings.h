// Every rank's short strings, gathered over the world: what a check that found
// the ranks disagreeing uses to name the first difference on both ranks.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace symmflow::exec {

// Collective over dist::world(): each rank passes up to `count` strings (of at
// most 255 characters each; longer ones are cut); returns [rank][i], padded
// with "" where a rank passed fewer.
std::vector<std::vector<std::string>> gather_strings(const std::vector<std::string>& mine, int64_t count);

}  // namespace symmflow::exec
