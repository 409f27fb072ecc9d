// collective_lowering: picks the algorithm of every all_reduce, from its size,
// the world size and whether placement made its buffer symmetric; the executor
// hands the choice to the runtime, and --json / --explain report it.
//
//   %y = c10d::all_reduce_(%h, "sum", "world")   # %h symmetric, 4 KiB, world 2
//        -> algorithm "two_shot" (above the one-shot threshold of 2 KiB)
//
// - c10d all_reduce on a symmetric buffer: one_shot up to the threshold for this
//   world size, two_shot above; on a regular buffer: staged (copied through the
//   heap's workspace, counted).
// - symm_mem ops name their algorithm: one_shot_all_reduce* -> one_shot,
//   two_shot_all_reduce* -> two_shot, multimem_all_reduce_ -> one_shot (CPU has
//   no multicast; one-shot is its read-all-peers equivalent); those whose kernel
//   copies by definition are "staged" (one_shot_all_reduce_copy*, which copies
//   local_input into symm_buffer; two_shot_all_reduce_out, which copies the
//   result out; reduce_scatter_out along the last dim, which makes the chunks
//   leading), as the runtime counts them; tile_reduce is "staged" when a tile
//   is not rows the runtime reads in place (a column, a transposed tile).
// - other collectives: "direct" on symmetric buffers, "staged" otherwise; P2P
//   "direct" when its receive buffers are symmetric and each send buffer is
//   symmetric or a contiguous view of a graph input (sent rendezvous, the data
//   moves once into the peer's receive buffer), "staged" otherwise.
// Thresholds: the tuning file of `symmflow tune` for this world size when there
// is one (SYMMFLOW_TUNE_FILE, default ~/.cache/symmflow/tune.json), else the
// runtime's (SYMMFLOW_ONE_SHOT_MAX_BYTES, 2 KiB).
#pragma once
#include <cstddef>
#include <optional>
#include <string>

#include "symmflow/passes/pass.h"

namespace symmflow::passes {

class CollectiveLowering : public Pass {
 public:
  std::string_view name() const override { return "collective_lowering"; }
  bool run(ir::Graph& g) override;
};

// The tuning file's path, and its one-shot threshold for a world size (nullopt
// when there is no file or no entry for that size). A malformed file is an Error.
std::string tune_file_path();
std::optional<size_t> tuned_one_shot_max_bytes(int world, const std::string& path = tune_file_path());
// The threshold compilation uses for this world size, and where it came from.
size_t one_shot_max_bytes(int world, std::string* source = nullptr);

}  // namespace symmflow::passes
