#include "symmflow/exec/compiled_program.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstring>

#include "symmflow/exec/input_fill.h"
#include "symmflow/ir/exec_plan.h"
#include "symmflow/ir/parser.h"
#include "symmflow/kernels/layer_norm.h"
#include "symmflow/passes/pipeline.h"
#include "symmflow/runtime/launcher.h"
#include "symmflow/runtime/symm.h"
#include "symmflow/runtime/world.h"

namespace symmflow::exec {
namespace {

constexpr const char* kTpMlp = R"(graph @tp(%x: f32[16, 32], %w1: f32[32, 64], %w2: f32[64, 32]) -> (f32[16, 32]) {
  %h = aten::mm(%x, %w1)
  %g = aten::gelu(%h)
  %y = aten::mm(%g, %w2)
  %r = c10d::all_reduce(%y, "sum", "world")
  %out = c10d::wait_tensor(%r)
  return %out
})";

std::unique_ptr<CompiledProgram> compile_text(const std::string& text, int rank, int world) {
  auto g = ir::parse_graph(text, {"t.sf", rank, world});
  passes::optimize(*g, {});
  return std::make_unique<CompiledProgram>(std::move(g));
}

// The executor runs the plan the pipeline built and derives nothing: a graph
// that was never compiled is refused, naming the remedy, rather than planned here.
TEST(CompiledProgram, RefusesAGraphWithoutAnExecutablePlan) {
  auto g = ir::parse_graph("graph @f(%x: f32[4]) -> (f32[4]) {\n  %y = aten::mul(%x, 2.0)\n  return %y\n}", {"t.sf", 0, 1});
  try {
    CompiledProgram prog(std::move(g));
    FAIL() << "an uncompiled graph was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no executable plan"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("passes::optimize"), std::string::npos) << e.what();
  }
}

// The plan's typed facts: the all_reduce's algorithm is an enum, its wait names
// it, and the executor's label and group come from the same instruction.
TEST(CompiledProgram, PlanPairsTheAllReduceWithItsWait) {
  auto g = ir::parse_graph(kTpMlp, {"t.sf", 0, 1});
  passes::optimize(*g, {});
  const auto& steps = g->exec_plan()->instructions;
  int start = -1, wait = -1;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].kind == ir::InstrKind::collective) start = int(i);
    if (steps[i].kind == ir::InstrKind::wait) wait = int(i);
  }
  ASSERT_GE(start, 0);
  ASSERT_GT(wait, start);
  EXPECT_EQ(steps[size_t(start)].waits, std::vector<int>{wait});
  EXPECT_TRUE(steps[size_t(start)].start_async);
  EXPECT_EQ(steps[size_t(wait)].start, start);
  EXPECT_EQ(steps[size_t(start)].group, "world");
  EXPECT_EQ(steps[size_t(start)].algorithm, ir::Algorithm::one_shot);
  EXPECT_EQ(steps[size_t(start)].label, "c10d::all_reduce_ %r");  // reinplaced into %y
}

TEST(CompiledProgram, SymmetricBuffersKeepTheirAddressesFor100Runs) {
  int rc = runtime::launch_fn(2, [] {
    dist::init();
    const int rank = dist::world().rank();
    auto prog = compile_text(kTpMlp, rank, 2);
    const ir::Value* y = prog->graph().find_value("y");
    SF_CHECK(y && y->symmetric(), "%y is not placed in symmetric memory");
    const void* addr = prog->buffer_address(y);
    SF_CHECK(addr != nullptr, "%y has no planned buffer");
    auto in = seeded_inputs(prog->graph(), 0, rank);
    auto first = prog->run(in);
    for (int i = 0; i < 100; ++i) {
      auto out = prog->run(in);
      SF_CHECK(prog->buffer_address(y) == addr, "run {}: %y moved", i);
      SF_CHECK(std::memcmp(out[0].data_ptr(), first[0].data_ptr(), out[0].nbytes()) == 0, "run {} differs", i);
      SF_CHECK(out[0].data_ptr() != first[0].data_ptr(), "outputs must be the caller's");
      SF_CHECK(prog->stats().misplaced == 0, "a planned result landed elsewhere");
    }
    return 0;
  });
  EXPECT_EQ(rc, 0);
}

// A returned result is not planned; a later result of the same size is. The
// kernel allocates them in order, so the returned %mean must not take %rstd's
// buffer (which %m3 reuses once %rstd is dead).
TEST(CompiledProgram, ReturnedResultDoesNotTakeALaterResultsBuffer) {
  int rc = runtime::launch_fn(1, [] {
    dist::init();
    auto prog = compile_text(R"(graph @ln(%x: f32[4, 8]) -> (f32[4, 1], f32[]) {
  %y, %mean, %rstd = aten::native_layer_norm(%x, [8], None, None, 1e-05)
  %m2 = aten::mul(%rstd, 3.0)
  %m3 = aten::add(%m2, 1.0)
  %s = aten::sum(%m3)
  return %mean, %s
})", 0, 1);
    auto in = seeded_inputs(prog->graph(), 0, 0);
    auto out = prog->run(in);
    Tensor want = kernels::native_layer_norm(in[0].to_tensor(), {8}, std::nullopt, std::nullopt, 1e-5).mean;
    SF_CHECK(std::memcmp(out[0].data_ptr(), want.data_ptr(), want.nbytes()) == 0, "%mean was overwritten");
    SF_CHECK(prog->stats().misplaced == 0, "a planned result landed elsewhere");
    return 0;
  });
  EXPECT_EQ(rc, 0);
}

// layer_norm's kernel makes its mean and rstd as temporaries. The first run
// records them; every later run gets the same buffers back and allocates only
// the result it returns (the caller keeps that one), at every rank count.
void TemporariesAreAllocatedOnceAt(int ranks) {
  int rc = runtime::launch_fn(ranks, [ranks] {
    dist::init();
    const int rank = dist::world().rank();
    auto prog = compile_text(R"(graph @ln(%x: f32[64, 256]) -> (f32[64, 256]) {
  %y = aten::layer_norm(%x, [256], None, None, 1e-05)
  %z = aten::mul(%y, 2.0)
  %r = c10d::all_reduce(%z, "sum", "world")
  %w = c10d::wait_tensor(%r)
  %o = aten::add(%w, 1.0)
  return %o
})", rank, ranks);
    auto in = seeded_inputs(prog->graph(), 0, rank);
    auto first = prog->run(in);
    const int64_t kept = prog->stats().temporary_bytes;
    SF_CHECK(prog->stats().allocations >= 2, "the first run records its temporaries, got {} allocations",
             prog->stats().allocations);
    SF_CHECK(kept >= 2 * 64 * 4, "layer_norm's mean and rstd are kept between runs: {} bytes", kept);
    for (int i = 0; i < 20; ++i) {
      auto out = prog->run(in);
      SF_CHECK(prog->stats().allocations == 1, "run {}: {} allocations, want only the returned result", i,
               prog->stats().allocations);
      SF_CHECK(prog->stats().temporary_bytes == kept, "run {}: temporaries grew to {} bytes", i,
               prog->stats().temporary_bytes);
      SF_CHECK(out[0].data_ptr() != first[0].data_ptr(), "the returned result must be the caller's own");
      SF_CHECK(std::memcmp(out[0].data_ptr(), first[0].data_ptr(), out[0].nbytes()) == 0, "run {} differs", i);
    }
    return 0;
  });
  EXPECT_EQ(rc, 0);
}

TEST(CompiledProgram, KernelTemporariesAreAllocatedOnceNotPerRunAtOneRank) { TemporariesAreAllocatedOnceAt(1); }
TEST(CompiledProgram, KernelTemporariesAreAllocatedOnceNotPerRunAtTwoRanks) { TemporariesAreAllocatedOnceAt(2); }

// An input all_reduced in place and returned: placement wants it symmetric, so a
// regular caller's tensor is copied in, copied back (the program writes it) and
// the returned value (in the arena) copied out: three copies, each in the report
// with its origin, and exactly what the executor did. Passed symmetric: none.
constexpr const char* kInPlaceInput = R"(graph @f(%x: f32[256]) -> (f32[256]) {
  c10d::all_reduce_(%x, "sum", "world")
  %y = aten::mul(%x, 2.0)
  return %x
})";

TEST(CompiledProgram, CopyReportIsWhatTheExecutorCopies) {
  int rc = runtime::launch_fn(2, [] {
    dist::init();
    const int rank = dist::world().rank();
    auto prog = compile_text(kInPlaceInput, rank, 2);
    auto in = seeded_inputs(prog->graph(), 0, rank);
    prog->run(in);
    ProgramStats s = prog->stats();
    const int64_t b = 256 * 4;
    SF_CHECK(s.copies.count(CopyOrigin::input_to_symmetric) == 2 && s.copies.bytes(CopyOrigin::input_to_symmetric) == 2 * b,
             "inputs: {} copies, {} bytes", s.copies.count(CopyOrigin::input_to_symmetric),
             s.copies.bytes(CopyOrigin::input_to_symmetric));
    SF_CHECK(s.copies.count(CopyOrigin::output_from_symmetric) == 1, "outputs: {}",
             s.copies.count(CopyOrigin::output_from_symmetric));
    SF_CHECK(s.copies.staged_measured && s.copies.count(CopyOrigin::staged) == 0, "nothing is staged");
    SF_CHECK(s.executor_copies == 3 && s.executor_copy_bytes == 3 * b, "the executor copied {} ({} bytes)",
             s.executor_copies, s.executor_copy_bytes);
    SF_CHECK(s.copies.count() == 3 && s.copies.bytes() == 3 * b, "report total {} ({} bytes)", s.copies.count(),
             s.copies.bytes());
    // The caller's tensor is symmetric: used in place, returned as it is.
    Tensor x = symm::empty({256}, DType::f32);
    fill_input(x, 0, 0, rank);
    std::vector<IValue> sym{IValue(x)};
    prog->run(sym);
    s = prog->stats();
    SF_CHECK(s.copies.count() == 0 && s.executor_copies == 0, "symmetric input: report {}, executor {}",
             s.copies.count(), s.executor_copies);
    return 0;
  });
  EXPECT_EQ(rc, 0);
}

TEST(CompiledProgram, RanksThatPlannedDifferentProgramsFailBeforeAnyCollective) {
  runtime::LaunchOptions o;
  o.nproc = 2;
  o.grace_s = 1;
  o.err_fd = memfd_create("err", 0);
  int rc = runtime::launch_fn(o, [] {
    dist::init();
    const int rank = dist::world().rank();
    // Rank 1 traced the program for a batch of 8 rows, rank 0 for 16: their
    // all_reduce buffers differ.
    std::string text = kTpMlp;
    if (rank == 1)
      for (size_t at; (at = text.find("f32[16, 32]")) != std::string::npos;) text.replace(at, 11, "f32[8, 32]");
    try {
      compile_text(text, rank, 2);
    } catch (const Error& e) {
      std::string m = e.what();
      SF_CHECK(m.find("the ranks planned different symmetric memory") != std::string::npos, "message: {}", m);
      SF_CHECK(m.find("nothing has run") != std::string::npos, "message: {}", m);
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

// A caller's symmetric input is used in place, so the ranks compare where it
// sits, but only when the signature (plan hash + input offsets) changes:
// regular inputs (their planned buffers were compared at load) never, the same
// symmetric tensor once, another tensor once more.
TEST(CompiledProgram, CallerSymmetricInputsAreComparedOncePerSignatureNotPerRun) {
  int rc = runtime::launch_fn(2, [] {
    dist::init();
    const int rank = dist::world().rank();
    auto prog = compile_text(kInPlaceInput, rank, 2);
    for (int i = 0; i < 3; ++i) {
      auto in = seeded_inputs(prog->graph(), 0, rank);
      prog->run(in);
    }
    SF_CHECK(prog->stats().input_offset_checks == 0, "regular inputs: {} checks", prog->stats().input_offset_checks);
    Tensor x = symm::empty({256}, DType::f32), y = symm::empty({256}, DType::f32);
    std::vector<IValue> xs{IValue(x)}, ys{IValue(y)};
    for (int i = 0; i < 3; ++i) prog->run(xs);
    SF_CHECK(prog->stats().input_offset_checks == 1, "the same symmetric input 3 times: {} checks",
             prog->stats().input_offset_checks);
    prog->run(ys);
    prog->run(ys);
    SF_CHECK(prog->stats().input_offset_checks == 2, "then another one twice: {} checks",
             prog->stats().input_offset_checks);
    return 0;
  });
  EXPECT_EQ(rc, 0);
}

// The ranks allocated different symmetric tensors before the input, so it sits
// at different offsets: every rank fails before anything runs, naming the
// input, its op and both offsets.
TEST(CompiledProgram, SymmetricInputsAtDifferentOffsetsFailOnEveryRankNamingTheInput) {
  runtime::LaunchOptions o;
  o.nproc = 2;
  o.grace_s = 1;
  o.err_fd = memfd_create("err", 0);
  int rc = runtime::launch_fn(o, [] {
    dist::init();
    const int rank = dist::world().rank();
    auto prog = compile_text(kInPlaceInput, rank, 2);
    Tensor pad = symm::empty({rank == 0 ? 64 : 128}, DType::f32);
    Tensor x = symm::empty({256}, DType::f32);
    fill_input(x, 0, 0, rank);
    std::vector<float> before(x.data<float>(), x.data<float>() + 256);
    std::vector<IValue> xs{IValue(x)};
    try {
      prog->run(xs);
    } catch (const Error& e) {
      const std::string m = e.what();
      for (const char* part : {"graph input %x of c10d::all_reduce", "t.sf:2:", "at symmetric offset world+",
                               "on rank 0 but world+", "on rank 1", "nothing has run", "sf::symm::empty"})
        SF_CHECK(m.find(part) != std::string::npos, "'{}' missing from: {}", part, m);
      SF_CHECK(std::equal(before.begin(), before.end(), x.data<float>()), "the input was changed");
      return 42;
    }
    return 0;
  });
  EXPECT_EQ(rc, 42);
}

}  // namespace
}  // namespace symmflow::exec
