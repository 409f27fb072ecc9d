// --explain: each fused group is listed with its ops in eager's order, and a
// program with nothing fused has no fused line.
#include "symmflow/exec/explain.h"

#include <gtest/gtest.h>

#include "symmflow/ir/parser.h"
#include "symmflow/passes/pipeline.h"

namespace symmflow::exec {
namespace {

std::string explain_of(std::string_view text) {
  auto g = ir::parse_graph(text, {"t.sf", 0, 1});
  passes::optimize(*g, {});
  return explain(*g);
}

TEST(Explain, ListsEachFusedGroupWithItsOps) {
  const std::string e = explain_of(R"(graph @f(%x: f32[64, 32], %b: f32[32], %w: f32[32, 32]) -> (f32[64, 32]) {
  %a = aten::add(%x, %b)
  %g = aten::gelu(%a)
  %e = aten::exp(%g)
  %m = aten::mm(%e, %w)
  %s = aten::sigmoid(%m)
  %y = aten::mul(%s, %m)
  return %y
})");
  EXPECT_NE(e.find("  fused: 2 groups of elementwise ops (5 ops), each one loop over tiles\n"
                   "    %e.1 (4:8): 3 ops, 2 inputs: aten::add.Tensor -> aten::gelu -> aten::exp\n"
                   "    %y.1 (7:8): 2 ops, 1 input: aten::sigmoid -> aten::mul.Tensor\n"),
            std::string::npos)
      << e;
}

TEST(Explain, NoFusedLineWhenNothingIsFused) {
  const std::string e = explain_of(R"(graph @f(%x: f32[64]) -> (f32[64], f32[64]) {
  %a = aten::exp(%x)
  %b = aten::sin(%a)
  return %a, %b
})");
  EXPECT_EQ(e.find("fused:"), std::string::npos) << e;
}

}  // namespace
}  // namespace symmflow::exec
