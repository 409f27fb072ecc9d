// Element-wise reductions of W equally long inputs, the inner loop of every
// reducing collective (all_reduce, reduce_scatter, tile_reduce). One function
// for every algorithm is what makes them bitwise identical: contributions are
// folded in rank order 0..W-1, bf16/f16 accumulate in f32 and round once,
// avg is the sum divided by W (integers: truncating division), max/min
// propagate NaN like torch.maximum/minimum, integer sum/product wrap around.
// bool: sum and max are logical or, product and min logical and (as
// ProcessGroupNCCL maps them); avg on bool is an Error.
//
//   const void* srcs[] = {rank0_chunk, rank1_chunk};
//   reduce_kernel(DType::f32, ReduceOp::sum, 2, srcs, out, n);
//
// `dst` may be exactly one of the inputs (same address: an element is read by
// every input before it is written); it must not partially overlap one.
#pragma once
#include <cstddef>

#include "symmflow/core/dtype.h"
#include "symmflow/runtime/collectives/collectives.h"
#include "symmflow/runtime/copy_bytes.h"  // the collectives' bulk copy, below collectives/ and p2p/

namespace symmflow::dist::detail {

// Throws an Error when `op` is not defined on `dtype` (avg on bool), naming `what`.
void check_reducible(DType dtype, ReduceOp op, std::string_view what);

// dst[i] = finalize(fold over j in 0..w-1 of srcs[j][i]) for i < n.
void reduce_kernel(DType dtype, ReduceOp op, int w, const void* const* srcs, void* dst, size_t n);

// One link of a chained fold across nodes (hierarchical collectives): the
// same fold as reduce_kernel, split at any rank. With `acc_in` (accumulator
// type: f32 for bf16/f16, else the dtype) the fold continues from it over all
// w sources; without, it starts at srcs[0]. Then either `acc_out` receives the
// accumulator (not final), or `out` the finished value (avg: divided by
// `world`, the whole group's size; rounded once). Chaining links over the ranks
// in order gives bitwise what reduce_kernel gives over all of them at once.
size_t acc_itemsize(DType dtype);
void fold_link(DType dtype, ReduceOp op, const void* acc_in, int w, const void* const* srcs,
               void* acc_out, void* out, int world, size_t n);

}  // namespace symmflow::dist::detail
