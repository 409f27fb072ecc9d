// The IR verifier: runs after parsing, tracing and (in tests and debug builds)
// after every pass. It checks what every pass must keep true:
// - every node is bound to a defined op and has one argument per schema argument,
//   each fitting its schema type (a value where a Tensor goes, a list for Tensor[]);
// - every value is defined once, before its uses, by a node in program order or
//   as a graph input; the outputs are defined;
// - types: running the op's Meta kernel again gives the recorded result types;
// - the returned values have the signature's dtypes and sizes;
// - every value's def-use list (Value::uses, returned) is exactly what the
//   arguments and outputs say.
// A failure is an Error naming the pass, the node (`file:line:col`, op) and why.
#pragma once
#include <string_view>

#include "symmflow/ir/graph.h"

namespace symmflow::ir {

void verify(const Graph& g, std::string_view after = "parse");

}  // namespace symmflow::ir
