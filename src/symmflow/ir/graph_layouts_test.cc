// Graph::refresh_layouts runs the Meta kernel only of the nodes whose layouts
// may have changed (an edited operand of another layout, a changed op, a type
// set by hand, a reader of a value whose layout changed). Each test edits a
// graph, refreshes it, and compares every value's layout with a clone refreshed
// from scratch (a clone's nodes are all derived again): skipping a node must
// never leave a layout that a full derivation would change.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "symmflow/ir/parser.h"

namespace symmflow::ir {
namespace {

constexpr const char* kProgram = R"(
graph @f(%x: f32[4, 8], %y: f32[8, 4]) -> (f32[4], f32[8, 4]) {
  %a = aten::relu(%x)
  %yt = aten::t(%y)
  %t = aten::t(%a)
  %s = aten::select(%t, 0, 1)
  %e = aten::exp(%y)
  return %s, %e
}
)";

std::unique_ptr<Graph> program() { return parse_graph(kProgram, {"layouts.sf", 0, 1}); }

std::map<std::string, std::string> layouts(const Graph& g) {
  std::map<std::string, std::string> out;
  for (size_t i = 0; i < g.num_values(); ++i) {
    const Value* v = g.value(i);
    out[v->name()] = v->type().str(/*with_layout=*/true) + " storage " + std::to_string(v->storage_size());
  }
  return out;
}

// g's layouts equal those of a clone whose every node is derived again.
void expect_as_derived_from_scratch(Graph& g) {
  g.refresh_layouts();
  auto full = g.clone();
  full->refresh_layouts();
  EXPECT_EQ(layouts(g), layouts(*full));
}

TEST(RefreshLayouts, DerivesTheReadersOfAnOperandReplacedByAnotherLayout) {
  auto g = program();
  // Row 1 of t(%a) is column 1 of %a: every 8th element from offset 1.
  EXPECT_EQ(g->find_value("s")->type().strides, (Shape{8}));
  EXPECT_EQ(g->find_value("s")->type().offset, 1);
  // t(%a) now reads t(%y), which is [4, 8] with strides [1, 4]: t of it is
  // contiguous, and its row 1 is 4 elements from offset 4.
  g->replace_uses(g->find_value("a"), g->find_value("yt"));
  expect_as_derived_from_scratch(*g);
  EXPECT_EQ(g->find_value("t")->type().strides, (Shape{4, 1}));
  EXPECT_EQ(g->find_value("s")->type().strides, (Shape{1}));
  EXPECT_EQ(g->find_value("s")->type().offset, 4);
}

TEST(RefreshLayouts, DerivesATypeSetByHandAgainFromItsProducer) {
  auto g = program();
  // A column-major layout set by hand: relu's kernel makes a contiguous result,
  // as a full derivation would, and the views of it follow.
  g->find_value("a")->set_type(TensorType{DType::f32, {4, 8}, {1, 4}, 0});
  expect_as_derived_from_scratch(*g);
  EXPECT_EQ(g->find_value("a")->type().strides, (Shape{8, 1}));
  EXPECT_EQ(g->find_value("t")->type().strides, (Shape{1, 8}));
}

TEST(RefreshLayouts, DerivesANodeWhoseOperandIsSetAgain) {
  auto g = program();
  Node* t = g->find_value("t")->producer();
  g->set_arg(t, 0, Arg(g->find_value("yt")));
  expect_as_derived_from_scratch(*g);
  EXPECT_EQ(g->find_value("t")->type().strides, (Shape{4, 1}));
  g->set_value_at(t, WriteSlot{0, -1}, g->find_value("a"));
  expect_as_derived_from_scratch(*g);
  EXPECT_EQ(g->find_value("t")->type().strides, (Shape{1, 8}));
}

TEST(RefreshLayouts, KeepsLayoutsWhenAnOperandIsReplacedBySameLayout) {
  auto g = program();
  const auto before = layouts(*g);
  // %x and %a are both contiguous f32[4, 8]: nothing derived from them changes.
  g->replace_uses(g->find_value("a"), g->find_value("x"));
  expect_as_derived_from_scratch(*g);
  EXPECT_EQ(layouts(*g), before);
}

// storage_bytes skips building contiguous strides: the same bytes as the
// strides spelled out, offset included, and 0 for an empty view.
TEST(TensorTypeBytes, StorageBytesOfAContiguousTypeEqualThoseWithItsStridesSpelledOut) {
  for (const auto& [sizes, offset] : std::vector<std::pair<Shape, int64_t>>{
           {{2, 3}, 0}, {{2, 3}, 5}, {{7}, 1}, {{}, 3}, {{0, 4}, 9}, {{4, 1, 2}, 0}}) {
    const TensorType implicit{DType::f32, sizes, {}, offset};
    const TensorType spelled{DType::f32, sizes, contiguous_strides(sizes), offset};
    EXPECT_EQ(implicit.storage_bytes(), spelled.storage_bytes()) << implicit.str(true);
    EXPECT_EQ(implicit.is_contiguous_at_zero(), offset == 0);
    EXPECT_EQ(spelled.is_contiguous_at_zero(), offset == 0);
  }
  EXPECT_EQ((TensorType{DType::f32, {2, 3}, {}, 5}.storage_bytes()), (5 + 6) * 4);
  EXPECT_EQ((TensorType{DType::f64, {0, 4}, {}, 9}.storage_bytes()), 0);
  EXPECT_EQ((TensorType{DType::f32, {3, 2}, {1, 3}, 0}.storage_bytes()), 6 * 4);
  EXPECT_FALSE((TensorType{DType::f32, {3, 2}, {1, 3}, 0}.is_contiguous_at_zero()));
}

}  // namespace
}  // namespace symmflow::ir
