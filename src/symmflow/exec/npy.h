// numpy .npy files for `symmflow run --inputs / --save-outputs` (docs/ir.md, "Input
// files and outputs"): little-endian, C order, one file per tensor. numpy has no
// bfloat16, so bf16 travels as "<u2" holding the raw bits.
//
//   write_npy("out/out0.rank0.npy", t);                 // any dtype, any strides
//   Tensor x = read_npy("in/x.npy");                     // dtype from the file
//   Tensor w = read_npy("in/w.npy", DType::bf16);        // "<u2" read as bf16 bits
#pragma once
#include <optional>
#include <string>

#include "symmflow/core/dtype.h"
#include "symmflow/core/tensor.h"

namespace symmflow::exec {

// Writes t in row-major logical order whatever its strides, in np.save's exact
// layout (format 1.0, data 64-byte aligned). The file appears complete or not at
// all: it is written under a temporary name in the same folder, then renamed.
void write_npy(const std::string& path, const Tensor& t);

// Reads a .npy file (format 1.0, 2.0 or 3.0) into a new contiguous tensor from
// Tensor::empty, so the thread's allocator (symmetric inside a symm::Scope) holds
// it. Fortran-order files are read and reordered to C order. When `expect` is
// given the file must hold that dtype ("<u2" only as bf16); nothing is converted.
// Every problem is an Error naming the file and what was expected and found.
Tensor read_npy(const std::string& path, std::optional<DType> expect = std::nullopt);

}  // namespace symmflow::exec
