// What `symmflow run` prints when a run is done (unless --quiet): per distinct
// program of the file, the outputs of the first rank that runs it — name, type,
// FNV-1a checksum of the bytes (core/hash.h) and first values — and, with
// --iters, the median times.
//
//   @ring_overlap: rank 0 of 2, 1 output (compiled)
//     %out  f32[4096]  fnv1a 4e78b81b4f83c619  [11.001007, 0.8753357, -10.56372, 20.37674, ...]
//   median of 10 runs on rank 0: eager 1.21 ms, compiled 0.843 ms
#pragma once
#include <string>
#include <vector>

#include "symmflow/frontend/program_runner.h"

namespace symmflow::tools {

// One rank's block (the report must hold its outputs: RunRequest::keep_outputs).
std::string outputs_block(const frontend::RankReport& r, int world, bool compiled);

// Every rank's text as rank_text makes it, indexed by rank: the blocks of the
// first rank of each distinct program, in rank order (one block for an SPMD
// program, one per rank set for a program whose ranks run different code).
std::string rank_text(const frontend::RankReport& r, const std::string& block);
std::string distinct_blocks(const std::vector<std::string>& rank_texts);

// "median of N runs on rank 0: eager A ms, compiled B ms" (the modes that ran).
std::string times_line(const frontend::RankReport& r, int iters, bool eager, bool compiled);

}  // namespace symmflow::tools
