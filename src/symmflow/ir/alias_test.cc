#include "symmflow/ir/alias.h"

#include <gtest/gtest.h>

#include "symmflow/ir/parser.h"

namespace symmflow::ir {
namespace {

// `Tensor(a -> *) self -> Tensor(a)[]`: every view split from one tensor aliases
// all of it (there is no list argument to index).
TEST(Alias, SplitViewsAliasTheirTensor) {
  auto g = parse_graph(R"(graph @f(%x: f32[2, 8]) -> (f32[2, 3], f32[2, 2]) {
  %a, %b, %c = aten::split(%x, 3, 1)
  %d, %e = aten::chunk(%x, 2, 0)
  %y = aten::_softmax(%x, 1, false)
  return %a, %c
})");
  const Node& split = *g->nodes()[0];
  ASSERT_EQ(split.outputs().size(), 3u);
  for (Value* v : split.output_aliases()) EXPECT_EQ(v, g->inputs()[0]);
  EXPECT_EQ(split.outputs()[2]->type().str(), "f32[2, 2]");
  auto roots = storage_roots(*g);
  for (const Node* n : {g->nodes()[0], g->nodes()[1]})
    for (const Value* v : n->outputs()) EXPECT_EQ(roots[size_t(v->id())], g->inputs()[0]);
  const Value* y = g->nodes()[2]->outputs()[0];
  EXPECT_EQ(roots[size_t(y->id())], y);  // a fresh result
}

}  // namespace
}  // namespace symmflow::ir
