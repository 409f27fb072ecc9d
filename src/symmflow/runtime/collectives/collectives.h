// Collectives over a ProcessGroup's symmetric heap: every rank of
// the group calls the same collective, in the same order, with tensors of the
// same type (all_to_all_single: matching splits).
//
// Zero copy: when a tensor the algorithm shares is symmetric and contiguous,
// peers read/write it in place through peer_ptr. Otherwise the *staged* path
// copies it into a heap workspace and back; those copies are counted
// (copy_stats.h) and reported in the result.
//
// Determinism: every algorithm combines contributions in rank order 0..W-1, and
// bf16/f16 accumulate in f32 and round once, so every rank and every algorithm
// (one-shot, two-shot, staged) produces bitwise identical results.
//
//   auto& g = dist::world();
//   Tensor x = symm::empty({1 << 20}, DType::f32);
//   ... fill x ...
//   dist::all_reduce_(g, x, dist::ReduceOp::sum);   // one-shot or two-shot by size
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "symmflow/core/tensor.h"
#include "symmflow/runtime/process_group.h"
#include "symmflow/runtime/work.h"

namespace symmflow::dist {

enum class ReduceOp { sum, avg, max, min, product };
// "sum" | "avg" | "max" | "min" | "product"; anything else is an Error listing them.
ReduceOp parse_reduce_op(std::string_view s);
std::string_view reduce_op_name(ReduceOp op);

// hierarchical: what a group spanning nodes always runs (any requested
// algorithm): shared memory in each node, a chained fold between nodes.
enum class AllReduceAlgo { automatic, one_shot, two_shot, hierarchical };
std::string_view algo_name(AllReduceAlgo a);

// Size thresholds of the automatic choice (per machine; see docs/performance.md).
// Environment: SYMMFLOW_ONE_SHOT_MAX_BYTES.
struct AlgorithmThresholds {
  size_t one_shot_max_bytes = 2 * 1024;  // one-shot up to this size, two-shot above (measured)
};
const AlgorithmThresholds& thresholds();
void set_thresholds(const AlgorithmThresholds& t);
// The algorithm `automatic` resolves to for this size and group.
AllReduceAlgo choose_all_reduce_algo(const ProcessGroup& g, size_t bytes);

// What ran, for reports and tests.
struct CollectiveResult {
  AllReduceAlgo algo = AllReduceAlgo::automatic;  // resolved algorithm (all_reduce only)
  bool staged = false;                            // a staged copy in/out was needed
  uint64_t staged_bytes = 0;                      // bytes this call copied
};

// Argument order as torch.distributed has it: the output before the input
// (all_gather_into_tensor(output, input), reduce_scatter_tensor(output, input),
// all_to_all_single(output, input, output_split_sizes, input_split_sizes)).
//
// Every collective has a blocking form and an asynchronous one (prefix `i`,
// as MPI_Iallreduce) returning a Work (work.h). The asynchronous form checks
// its arguments at once (errors throw from it), then runs as far as it can
// without waiting; wait() completes it. Calls of a group progress in issue
// order, P2P operations alongside; until wait() returned, an input must not be
// written and an output not read. The blocking form is start-then-wait. Groups
// spanning nodes run the hierarchical algorithms, which are blocking: their
// asynchronous form completes before it returns.

// t := reduce over ranks of t, in place.
CollectiveResult all_reduce_(ProcessGroup& g, const Tensor& t, ReduceOp op,
                             AllReduceAlgo algo = AllReduceAlgo::automatic);
Work iall_reduce_(ProcessGroup& g, const Tensor& t, ReduceOp op,
                  AllReduceAlgo algo = AllReduceAlgo::automatic);
// out := reduce over ranks of in (in is not modified; out may be any tensor of
// in's type). Zero copy when `in` is symmetric and contiguous (one-shot).
CollectiveResult all_reduce(ProcessGroup& g, const Tensor& out, const Tensor& in, ReduceOp op,
                            AllReduceAlgo algo = AllReduceAlgo::automatic);
Work iall_reduce(ProcessGroup& g, const Tensor& out, const Tensor& in, ReduceOp op,
                 AllReduceAlgo algo = AllReduceAlgo::automatic);
// out := cat([in of rank 0, ..., in of rank W-1]) as flat bytes; out has W * in.numel()
// elements (any shape, e.g. [W*d0, ...]).
CollectiveResult all_gather(ProcessGroup& g, const Tensor& out, const Tensor& in);
Work iall_gather(ProcessGroup& g, const Tensor& out, const Tensor& in);
// out := (reduce over ranks of in) chunk `rank`, where in is W equal flat chunks.
CollectiveResult reduce_scatter(ProcessGroup& g, const Tensor& out, const Tensor& in, ReduceOp op);
Work ireduce_scatter(ProcessGroup& g, const Tensor& out, const Tensor& in, ReduceOp op);
// Rows (dim-0 slices) of `in`, in_splits[j] of them for rank j, go to rank j; out
// receives out_splits[i] rows from rank i, in rank order. Empty splits mean equal
// splits (dim 0 divisible by W).
CollectiveResult all_to_all_single(ProcessGroup& g, const Tensor& out, const Tensor& in,
                                   std::span<const int64_t> out_splits,
                                   std::span<const int64_t> in_splits);
Work iall_to_all_single(ProcessGroup& g, const Tensor& out, const Tensor& in,
                        std::span<const int64_t> out_splits, std::span<const int64_t> in_splits);
// t := t of rank src, in place.
CollectiveResult broadcast_(ProcessGroup& g, const Tensor& t, int src);
Work ibroadcast_(ProcessGroup& g, const Tensor& t, int src);
// out_tile (on root only) := reduce over ranks of in_tile; other ranks' out_tile is
// untouched. in_tile and out_tile may be strided 2-D views (tiles of a matrix).
// (Input first, as torch.ops.symm_mem.tile_reduce has it.)
CollectiveResult tile_reduce(ProcessGroup& g, const Tensor& in_tile, const Tensor& out_tile,
                             int root, ReduceOp op);
Work itile_reduce(ProcessGroup& g, const Tensor& in_tile, const Tensor& out_tile, int root,
                  ReduceOp op);

}  // namespace symmflow::dist
