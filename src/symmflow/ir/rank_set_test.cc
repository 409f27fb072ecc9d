// Programs whose ranks run different code: graphs with rank sets (docs/ir.md).
#include <gtest/gtest.h>

#include "symmflow/ir/parser.h"
#include "symmflow/ir/printer.h"

namespace symmflow::ir {
namespace {

constexpr const char* kStages = R"(# three kinds of stage
graph @first ranks 0 (%x: f32[4]) -> (f32[4]) {
  %s = c10d::isend(%x, rank+1, 0, "world")
  c10d::wait_tensor(%s)
  return %x
}
graph @middle ranks 1..world-2 (%x: f32[4]) -> (f32[4]) {
  %q = c10d::irecv_(%x, rank-1, 0, "world")
  %y = c10d::wait_tensor(%q)
  %z = aten::mul(%y, 2.0)
  %s = c10d::isend(%z, rank+1, 0, "world")
  c10d::wait_tensor(%s)
  return %z
}
graph @last ranks world-1 (%x: f32[4]) -> (f32[4]) {
  %q = c10d::irecv_(%x, rank-1, 0, "world")
  %y = c10d::wait_tensor(%q)
  return %y
}
)";

std::string error_of(std::string_view text, int rank, int world) {
  try {
    parse_graph(text, {"t.sf", rank, world});
  } catch (const ParseError& e) {
    return e.what();
  }
  return "";
}

TEST(RankSets, EachRankParsesTheGraphWhoseSetHoldsIt) {
  EXPECT_EQ(parse_graph(kStages, {"t.sf", 0, 4})->name(), "first");
  for (int r : {1, 2}) {
    auto g = parse_graph(kStages, {"t.sf", r, 4});
    EXPECT_EQ(g->name(), "middle");
    EXPECT_EQ(g->rank(), r);
    ASSERT_NE(g->rank_set(), nullptr);
    EXPECT_EQ(g->rank_set()->str(), "1..world-2");
  }
  EXPECT_EQ(parse_graph(kStages, {"t.sf", 3, 4})->name(), "last");
  // At two ranks the middle set is empty: rank 1 is the last stage.
  EXPECT_EQ(parse_graph(kStages, {"t.sf", 1, 2})->name(), "last");
  // An SPMD graph has no rank set and prints none.
  auto spmd = parse_graph("graph @f(%x: f32[4]) -> (f32[4]) {\n  return %x\n}", {"t.sf", 0, 2});
  EXPECT_EQ(spmd->rank_set(), nullptr);
  EXPECT_EQ(print_graph(*spmd).rfind("graph @f(", 0), 0u);
}

TEST(RankSets, PrintingTheProgramAndParsingItAgainGivesTheSameGraphs) {
  auto graphs = parse_program(kStages, {"t.sf", 0, 4});
  ASSERT_EQ(graphs.size(), 3u);
  const std::string text = print_program(graphs);
  EXPECT_NE(text.find("graph @middle ranks 1..world-2 (%x: f32[4]) -> (f32[4]) {"), std::string::npos) << text;
  EXPECT_EQ(print_program(parse_program(text, {"t.sf", 0, 4})), text);
  // One rank's graph printed alone parses back for that rank.
  auto g = parse_graph(kStages, {"t.sf", 2, 4});
  EXPECT_EQ(print_graph(*parse_graph(print_graph(*g), {"t.sf", 2, 4})), print_graph(*g));
  // A set empty in this world is left out of the program.
  EXPECT_EQ(parse_program(kStages, {"t.sf", 0, 2}).size(), 2u);
}

TEST(RankSets, MistakesAreErrorsWithFileLineAndColumn) {
  std::string two = kStages;
  two.replace(two.find("ranks 1..world-2"), 16, "ranks 0..world-2");
  EXPECT_EQ(error_of(two, 0, 4),
            "t.sf:7:15: rank 0 (world 4) would run two graphs: @first (line 2) and @middle; each rank runs exactly one");
  std::string none = kStages;
  none.replace(none.find("ranks 1..world-2"), 16, "ranks 1..world-3");
  EXPECT_EQ(error_of(none, 2, 4),
            "t.sf:2:1: rank 2 (world 4) runs no graph: no rank set holds it (@first ranks 0 (line 2), @middle ranks "
            "1..world-3 (line 7), @last ranks world-1 (line 15)); add it to one");
  std::string by_rank = kStages;
  by_rank.replace(by_rank.find("ranks world-1"), 13, "ranks rank+1");
  EXPECT_EQ(error_of(by_rank, 0, 4), "t.sf:15:19: a rank set is written over `world` only, not `rank` (found rank+1)");
  std::string outside = kStages;
  outside.replace(outside.find("ranks world-1"), 13, "ranks 7");
  EXPECT_EQ(error_of(outside, 0, 4), "t.sf:15:19: rank set item 7 is rank 7 in a world of 4: ranks are 0..3");
  std::string unnamed = kStages;
  unnamed.replace(unnamed.find(" ranks world-1"), 14, "");
  EXPECT_EQ(error_of(unnamed, 0, 4).rfind("t.sf:15:1: graph @last has no rank set", 0), 0u) << error_of(unnamed, 0, 4);
  EXPECT_EQ(error_of("graph @f(%x: f32[4]) -> (f32[4]) {\n  return %x\n}\ngraph @g ranks 0 (", 0, 1)
                .rfind("t.sf:4:1: expected end of file after the graph, found 'graph'", 0),
            0u);
}

}  // namespace
}  // namespace symmflow::ir
