// Limits shared by the text readers (.sf parser, schema parser): input past them
// is a parse error with a location, never a stack overflow (nesting is parsed by
// recursion) or an unbounded token.
#pragma once
#include <cstddef>

namespace symmflow {

// Brackets and parentheses open at once: far above any real program, far below
// what the parser's recursion can take on an 8 MiB stack (with ASan's frames too).
inline constexpr int kMaxNestingDepth = 256;
// One identifier, number or string literal.
inline constexpr size_t kMaxLiteralBytes = 4096;

}  // namespace symmflow
