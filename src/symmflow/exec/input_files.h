// The files of `symmflow run --inputs DIR` (docs/ir.md, "Input files and
// outputs"): graph input %x on rank R comes from DIR/x.rank<R>.npy if present,
// else DIR/x.npy, and must hold exactly the signature's dtype and shape.
//
//   std::optional<Tensor> t = read_input_file("in", "x", type, /*rank=*/1);  // nullopt: no file
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "symmflow/core/tensor.h"
#include "symmflow/ir/graph.h"

namespace symmflow::exec {

// --inputs DIR reads input %name on `rank` from the first of these files that
// exists: "name.rank<R>.npy", then "name.npy".
std::vector<std::string> input_file_names(const std::string& name, int rank);

// The tensor (from Tensor::empty, so the thread's allocator holds it), or nullopt
// when DIR has no file for the input. A file that cannot be read, or holds
// another dtype or shape, is an ir::ParseError naming the input and the file
// (the command line's exit code 2).
std::optional<Tensor> read_input_file(const std::string& dir, const std::string& name,
                                      const ir::TensorType& type, int rank);

}  // namespace symmflow::exec
