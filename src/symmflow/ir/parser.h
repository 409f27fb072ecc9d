// Reads the text IR (docs/ir.md) into a Graph for one (rank, world). Every error
// is an Error whose message starts with `file:line:col: ` and says what was
// expected and what was found; errors from the op itself (no overload binds, the
// Meta kernel refuses the types) name the op.
//
//   auto g = parse_graph(text, {.file = "ring.sf", .rank = 1, .world = 4});
//   auto g = parse_graph_file("ring.sf", /*rank=*/1, /*world=*/4);
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "symmflow/ir/graph.h"

namespace symmflow::ir {

struct ParseOptions {
  std::string file = "<input>";
  int rank = 0;
  int world = 1;
};

// Thrown for every problem in the text: the CLI maps it to exit status 2.
class ParseError : public Error {
 public:
  using Error::Error;
};

// The graph opts.rank runs: the file's only graph, or, in a program whose ranks
// run different code, the one whose rank set holds opts.rank (docs/ir.md).
std::unique_ptr<Graph> parse_graph(std::string_view text, const ParseOptions& opts = {});
// Every graph of the file (opts.rank unused): each parsed for the first rank of
// its set, those empty in opts.world left out. print_program prints them all
// (the file again, up to comments and spacing).
std::vector<std::unique_ptr<Graph>> parse_program(std::string_view text, const ParseOptions& opts = {});
std::string print_program(const std::vector<std::unique_ptr<Graph>>& graphs);
std::unique_ptr<Graph> parse_graph_file(const std::string& path, int rank, int world);

}  // namespace symmflow::ir
