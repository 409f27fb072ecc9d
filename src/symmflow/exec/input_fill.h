// The deterministic input fill of `symmflow run --seed S` (docs/ir.md, "Input
// files and outputs"): graph input k on rank r gets, at row-major element i, a
// value from a splitmix64-style hash of (S, k, r, i). The values are small
// multiples of 1/16 or small integers, so every dtype holds them exactly and runs
// on different machines, or reproduced in numpy, see the same inputs.
//
//   Tensor x = Tensor::empty({4, 8}, DType::bf16);
//   fill_input(x, /*seed=*/0, /*input_index=*/0, /*rank=*/1);
//   IValue n = scalar_input(DType::i64, 0, /*input_index=*/1, /*rank=*/1);  // an int
#pragma once
#include <cstdint>
#include <vector>

#include "symmflow/core/dtype.h"
#include "symmflow/core/ivalue.h"
#include "symmflow/core/tensor.h"
#include "symmflow/ir/graph.h"

namespace symmflow::exec {

// h of docs/ir.md (a value below 2^32) for element i of input `input_index` on `rank`.
uint64_t input_hash(uint64_t seed, int input_index, int rank, uint64_t i);

// Writes every element of t through its view (any strides): element i in
// row-major logical order gets, with h = input_hash(seed, input_index, rank, i),
// (h % 256 - 128) / 16 for floating dtypes, h % 201 - 100 for integers, h % 2 for bool.
void fill_input(const Tensor& t, uint64_t seed, int input_index, int rank);

// A scalar graph input: the same formula at i = 0. dtype must be i64 (an int
// IValue), f64 (a double) or boolean (a bool); anything else is an Error.
IValue scalar_input(DType dtype, uint64_t seed, int input_index, int rank);

// Every input of g, filled as above (tensors contiguous, in the signature's order).
std::vector<IValue> seeded_inputs(const ir::Graph& g, uint64_t seed, int rank);

}  // namespace symmflow::exec
