// Programs whose ranks run different code (pipeline stages): the ranks agree on
// one symmetric layout — the collective region alike, each rank's P2P-only
// buffers its own, one arena of the largest size everywhere — and a rank whose
// collectives differ fails on every rank, naming both.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <algorithm>

#include "symmflow/exec/compiled_program.h"
#include "symmflow/exec/input_fill.h"
#include "symmflow/exec/interpreter.h"
#include "symmflow/exec/bitwise_diff.h"
#include "symmflow/ir/parser.h"
#include "symmflow/passes/pipeline.h"
#include "symmflow/runtime/launcher.h"
#include "symmflow/runtime/symm.h"
#include "symmflow/runtime/world.h"

namespace symmflow::exec {
namespace {

// Rank 0 sends before its all_reduce, the others receive before theirs: their
// P2P buffers differ, their collective is the same.
constexpr const char* kStages = R"(graph @step ranks 0 (%x: f32[4, 8], %w: f32[8, 8]) -> (f32[4, 8]) {
  %h = aten::mm(%x, %w)
  %s = c10d::isend(%h, rank+1, 0, "world")
  c10d::wait_tensor(%s)
  %g = aten::mul(%x, 2.0)
  %r = c10d::all_reduce(%g, "sum", "world")
  %o = c10d::wait_tensor(%r)
  return %o
}
graph @step ranks 1..world-2 (%x: f32[4, 8], %w: f32[8, 8]) -> (f32[4, 8]) {
  %b = aten::zeros([4, 8], f32)
  %q = c10d::irecv_(%b, rank-1, 0, "world")
  %y = c10d::wait_tensor(%q)
  %h = aten::mm(%y, %w)
  %s = c10d::isend(%h, rank+1, 0, "world")
  c10d::wait_tensor(%s)
  %g = aten::relu(%h)
  %r = c10d::all_reduce(%g, "sum", "world")
  %o = c10d::wait_tensor(%r)
  return %o
}
graph @step ranks world-1 (%x: f32[4, 8], %w: f32[8, 8]) -> (f32[4, 8]) {
  %b = aten::zeros([4, 8], f32)
  %q = c10d::irecv_(%b, rank-1, 0, "world")
  %y = c10d::wait_tensor(%q)
  %g = aten::mm(%y, %w)
  %r = c10d::all_reduce(%g, "sum", "world")
  %o = c10d::wait_tensor(%r)
  return %o
}
)";

std::unique_ptr<ir::Graph> compiled_graph(const std::string& text, int rank, int world) {
  auto g = ir::parse_graph(text, {"t.sf", rank, world});
  passes::optimize(*g, {});
  return g;
}

// Every rank: the same collective region, an arena of the largest size any rank
// planned, and results bitwise equal to eager.
int run_stages(int world) {
  dist::init();
  const int rank = dist::world().rank();
  int64_t largest = 0;
  for (int r = 0; r < world; ++r) largest = std::max(largest, compiled_graph(kStages, r, world)->plan().arena_bytes[1]);
  CompiledProgram prog(compiled_graph(kStages, rank, world));
  const auto& plan = prog.graph().plan();
  SF_CHECK(plan.collective_buffers.size() == 1 && plan.collective_buffers[0].collective == 0 &&
               plan.collective_buffers[0].offset == 0 && plan.collective_bytes == 128,
           "rank {}: the all_reduce buffer is not alone at +0 of a 128-byte collective region", rank);
  auto in = seeded_inputs(prog.graph(), 0, rank);
  auto eager = run_eager(*ir::parse_graph(kStages, {"t.sf", rank, world}), seeded_inputs(prog.graph(), 0, rank));
  for (int i = 0; i < 3; ++i) {
    auto out = prog.run(in);
    SF_CHECK(first_bitwise_difference(eager[0], out[0]).empty(), "rank {} run {}: {}", rank, i,
             first_bitwise_difference(eager[0], out[0]));
  }
  SF_CHECK(prog.stats().symmetric_bytes == largest, "rank {}: symmetric arena {} bytes, expected the largest plan's {}",
           rank, prog.stats().symmetric_bytes, largest);
  return 0;
}

TEST(RankPrograms, TwoStagesAgreeOnOneLayoutAndRunAsEager) {
  EXPECT_EQ(runtime::launch_fn(2, [] { return run_stages(2); }), 0);
}

TEST(RankPrograms, FourStagesAgreeOnOneLayoutAndRunAsEager) {
  EXPECT_EQ(runtime::launch_fn(4, [] { return run_stages(4); }), 0);
}

TEST(RankPrograms, ACollectiveThatDiffersFailsOnEveryRankNamingBothRanks) {
  runtime::LaunchOptions o;
  o.nproc = 2;
  o.grace_s = 1;
  o.err_fd = memfd_create("err", 0);
  int rc = runtime::launch_fn(o, [] {
    dist::init();
    const int rank = dist::world().rank();
    // The last stage all_reduces 8 rows where the first reduces 4.
    std::string text = kStages;
    const size_t last = text.find("ranks world-1");
    text.replace(text.find("aten::mm(%y, %w)", last), 16, "aten::cat([%y, %y])");
    text.replace(text.find("-> (f32[4, 8])", last), 14, "-> (f32[8, 8])");
    try {
      CompiledProgram prog(compiled_graph(text, rank, 2));
    } catch (const Error& e) {
      const std::string m = e.what();
      for (const char* part : {"the ranks planned different symmetric memory", "on rank 0", "on rank 1",
                               "collective #0 operand 0: 128 bytes at +0 (%g of c10d::all_reduce_ at t.sf:6:",
                               "collective #0 operand 0: 256 bytes at +0", "nothing has run"})
        SF_CHECK(m.find(part) != std::string::npos, "rank {}: '{}' missing from: {}", rank, part, m);
      return 42;  // the expected failure, on every rank
    }
    return 0;
  });
  EXPECT_EQ(rc, 42);
}

}  // namespace
}  // namespace symmflow::exec

namespace symmflow::exec {
namespace {

// Rank 0 all_reduces its input in place, the others an intermediate: the same
// collective region, but a graph input on rank 0 only. Rank 0's caller passes a
// symmetric tensor, which would make rank 0 alone compare input offsets; told
// at load that the ranks' inputs differ, no rank compares, and every run works.
constexpr const char* kInputOnRankZero = R"(graph @f ranks 0 (%x: f32[64]) -> (f32[64]) {
  c10d::all_reduce_(%x, "sum", "world")
  %y = aten::mul(%x, 2.0)
  return %y
}
graph @f ranks 1..world-1 (%x: f32[64]) -> (f32[64]) {
  %g = aten::mul(%x, 1.0)
  %r = c10d::all_reduce(%g, "sum", "world")
  %o = c10d::wait_tensor(%r)
  %y = aten::mul(%o, 2.0)
  return %y
}
)";

TEST(RankPrograms, AnInputOnOneRankOnlyIsNotComparedAcrossRanksAndRuns) {
  runtime::LaunchOptions o;
  o.nproc = 2;
  o.grace_s = 1;
  int rc = runtime::launch_fn(o, [] {
    dist::init();
    const int rank = dist::world().rank();
    CompiledProgram prog(compiled_graph(kInputOnRankZero, rank, 2));
    for (int run = 0; run < 2; ++run) {
      Tensor x = rank == 0 ? symm::empty({64}, DType::f32) : Tensor::empty({64}, DType::f32);
      for (int i = 0; i < 64; ++i) x.data<float>()[i] = float(rank + 1);
      std::vector<IValue> in{IValue(x)};
      Tensor y = prog.run(in).at(0);
      for (int i = 0; i < 64; ++i) SF_CHECK(y.data<float>()[i] == 6.0f, "y[{}] = {} on rank {}", i, y.data<float>()[i], rank);
    }
    SF_CHECK(prog.stats().input_offset_checks == 0, "{} checks", prog.stats().input_offset_checks);
    return 0;
  });
  EXPECT_EQ(rc, 0);
}

}  // namespace
}  // namespace symmflow::exec
