// --explain: each fused group is listed with its ops in eager's order, and a
// program with nothing fused has no fused line; an op's algorithm line says
// what the measured run staged for it.
#include "symmflow/exec/explain.h"
#include "symmflow/exec/copy_report.h"

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

// A label is the plan's; a run may still stage for the op (a lone small send
// posted before the peer's receive goes eager). The line says so beside the
// label, so that it never reads plain `direct` while the header counts copies.
TEST(Explain, AnOpsLineSaysWhatTheRunStagedForIt) {
  auto g = ir::parse_graph(R"(graph @f(%x: f32[16]) -> (f32[16]) {
  %h = c10d::isend(%x, (rank+1)%world, 0, "world")
  c10d::wait_tensor(%h)
  %y = aten::mul(%x, 2.0)
  return %y
})", {"t.sf", 0, 2});
  passes::optimize(*g, {});
  const ir::Node* send = nullptr;
  for (const ir::Node* n : g->nodes())
    if (n->op_name() == "c10d::isend") send = n;
  ASSERT_NE(send, nullptr);
  ASSERT_EQ(send->algorithm(), ir::Algorithm::direct);
  CopyReport measured = copy_report(*g);
  measured.add_staged(send, 2, 128);
  const std::string e = explain(*g, measured);
  EXPECT_NE(e.find("2:8: c10d::isend runs direct, staged 128 bytes on this rank's run\n"), std::string::npos) << e;
  const std::string unmeasured = explain(*g, copy_report(*g));
  EXPECT_NE(unmeasured.find("2:8: c10d::isend runs direct\n"), std::string::npos) << unmeasured;
}

}  // namespace
}  // namespace symmflow::exec
