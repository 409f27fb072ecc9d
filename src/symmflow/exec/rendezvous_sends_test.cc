// Rendezvous sends across ranks: the choice on hand-written step lists (each
// case a program that deadlocks when every send is made rendezvous, or one that
// must not lose its rendezvous sends), then compiled programs whose ranks run
// different code, run at 2 and 4 ranks: no staged copy, results as eager, and
// no deadlock where a naive choice would have one.
#include "symmflow/exec/rendezvous_sends.h"

#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include "symmflow/exec/bitwise_diff.h"
#include "symmflow/exec/compiled_program.h"
#include "symmflow/exec/input_fill.h"
#include "symmflow/exec/interpreter.h"
#include "symmflow/ir/exec_plan.h"
#include "symmflow/ir/parser.h"
#include "symmflow/passes/pipeline.h"
#include "symmflow/runtime/copy_stats.h"
#include "symmflow/runtime/launcher.h"
#include "symmflow/runtime/world.h"

namespace symmflow::exec {
namespace {

using Kind = CommStep::Kind;

CommStep send(int peer, int tag, bool direct = false) { return {Kind::send, peer, tag, direct}; }
CommStep recv(int peer, int tag, bool direct = true) { return {Kind::recv, peer, tag, direct}; }
CommStep wait(int target) { return {Kind::wait, -1, 0, false, false, target}; }
CommStep all_reduce() { return {Kind::collective, -1, 0, false, /*blocks=*/true, -1, "world"}; }

TEST(RendezvousSends, ASendIntoAPostedSymmetricReceiveIsRendezvous) {
  // Rank 0 sends, rank 1 receives into a symmetric buffer.
  auto chosen = choose_rendezvous_sends({{send(1, 0), wait(0)}, {recv(0, 0), wait(0)}});
  ASSERT_EQ(chosen.size(), 2u);
  EXPECT_TRUE(chosen[0][0]);
}

TEST(RendezvousSends, ASendWithNoSymmetricEndStaysEager) {
  auto chosen = choose_rendezvous_sends({{send(1, 0), wait(0)}, {recv(0, 0, /*direct=*/false), wait(0)}});
  ASSERT_EQ(chosen.size(), 2u);
  EXPECT_FALSE(chosen[0][0]);
}

TEST(RendezvousSends, HeadToHeadSendsThatWaitBeforeReceivingStayEager) {
  // Each rank waits for its send before posting its receive: both rendezvous deadlock.
  const std::vector<CommStep> both = {send(-1, 0), wait(0), recv(-1, 0), wait(2)};
  auto rank = [&](int peer) {
    auto s = both;
    s[0].peer = s[2].peer = peer;
    return s;
  };
  auto chosen = choose_rendezvous_sends({rank(1), rank(0)});
  ASSERT_EQ(chosen.size(), 2u);
  EXPECT_FALSE(chosen[0][0]);
  EXPECT_FALSE(chosen[1][0]);
}

TEST(RendezvousSends, OnlyTheSendWhoseReceiveComesLateIsMadeEager) {
  // Rank 1 receives tag 1 before tag 0; rank 0 sends tag 0 first and waits for
  // it before sending tag 1. Tag 0 rendezvous would deadlock; tag 1 is posted
  // at once, so it stays rendezvous.
  auto chosen = choose_rendezvous_sends({{send(1, 0), wait(0), send(1, 1), wait(2)},
                                         {recv(0, 1), wait(0), recv(0, 0), wait(2)}});
  ASSERT_EQ(chosen.size(), 2u);
  EXPECT_FALSE(chosen[0][0]);
  EXPECT_TRUE(chosen[0][2]);
}

TEST(RendezvousSends, ABlockingCollectiveBeforeTheReceiveKeepsTheSendEager) {
  // Rank 1 is in the all_reduce before it posts; rank 0 enters it only after its send.
  auto chosen = choose_rendezvous_sends({{send(1, 0), wait(0), all_reduce()}, {all_reduce(), recv(0, 0), wait(1)}});
  ASSERT_EQ(chosen.size(), 2u);
  EXPECT_FALSE(chosen[0][0]);
  // With the receive posted before the all_reduce, the send may wait for it.
  chosen = choose_rendezvous_sends({{send(1, 0), wait(0), all_reduce()}, {recv(0, 0), all_reduce(), wait(0)}});
  ASSERT_EQ(chosen.size(), 2u);
  EXPECT_TRUE(chosen[0][0]);
}

TEST(RendezvousSends, UnmatchedOrUnknownProgramsChangeNothing) {
  EXPECT_TRUE(choose_rendezvous_sends({{send(1, 0), wait(0)}, {}}).empty());
  EXPECT_TRUE(choose_rendezvous_sends({{send(1, 0), wait(0)}, {recv(0, 0), wait(0), CommStep{}}}).empty());
}

TEST(RendezvousSends, StepsSurviveTheExchange) {
  std::vector<CommStep> steps = {send(1, 7, true), wait(0), all_reduce()};
  steps[2].blocks = false;
  steps[2].group = "tp";
  const auto back = deserialize_steps(serialize(steps));
  ASSERT_EQ(back.size(), 3u);
  EXPECT_EQ(back[0].kind, Kind::send);
  EXPECT_EQ(back[0].peer, 1);
  EXPECT_EQ(back[0].tag, 7);
  EXPECT_TRUE(back[0].direct);
  EXPECT_EQ(back[1].target, 0);
  EXPECT_EQ(back[2].group, "tp");
  EXPECT_FALSE(back[2].blocks);
}

// --- compiled programs whose ranks run different code, at 2 and 4 ranks ---------------

// A forward pipeline: each stage receives (into a symmetric buffer), computes,
// sends on; a receive posted ahead, sends waited at the end.
constexpr const char* kPipeline = R"(graph @p ranks 0 (%x: f32[4, 8], %w: f32[8, 8]) -> (f32[4, 8]) {
  %a0 = aten::mm(%x, %w)
  %s0 = c10d::isend(%a0, rank+1, 0, "world")
  %a1 = aten::relu(%a0)
  %s1 = c10d::isend(%a1, rank+1, 1, "world")
  c10d::wait_tensor(%s0)
  c10d::wait_tensor(%s1)
  return %a1
}
graph @p ranks 1..world-2 (%x: f32[4, 8], %w: f32[8, 8]) -> (f32[4, 8]) {
  %b0 = aten::zeros([4, 8], f32)
  %q0 = c10d::irecv_(%b0, rank-1, 0, "world")
  %b1 = aten::zeros([4, 8], f32)
  %q1 = c10d::irecv_(%b1, rank-1, 1, "world")
  %h0 = c10d::wait_tensor(%q0)
  %a0 = aten::mm(%h0, %w)
  %s0 = c10d::isend(%a0, rank+1, 0, "world")
  %h1 = c10d::wait_tensor(%q1)
  %a1 = aten::mm(%h1, %w)
  %s1 = c10d::isend(%a1, rank+1, 1, "world")
  c10d::wait_tensor(%s0)
  c10d::wait_tensor(%s1)
  return %a1
}
graph @p ranks world-1 (%x: f32[4, 8], %w: f32[8, 8]) -> (f32[4, 8]) {
  %b0 = aten::zeros([4, 8], f32)
  %q0 = c10d::irecv_(%b0, rank-1, 0, "world")
  %b1 = aten::zeros([4, 8], f32)
  %q1 = c10d::irecv_(%b1, rank-1, 1, "world")
  %h0 = c10d::wait_tensor(%q0)
  %h1 = c10d::wait_tensor(%q1)
  %a1 = aten::add(%h1, %h0)
  return %a1
}
)";

// Rank 1 receives tag 1 before tag 0, into a buffer made from what tag 1
// brought; rank 0 waits for its tag-0 send before it sends tag 1: compiled
// with one op in flight at most (ScheduleOptions::max_in_flight = 1), so that
// the schedule keeps that wait before the next send
// (OnlyTheSendWhoseReceiveComesLateIsMadeEager, compiled). Every send
// rendezvous would deadlock both ranks.
constexpr const char* kLateReceive = R"(graph @l ranks 0 (%x: f32[4, 8]) -> (f32[4, 8]) {
  %a = aten::mul(%x, 2.0)
  %s0 = c10d::isend(%a, 1, 0, "world")
  c10d::wait_tensor(%s0)
  %c = aten::add(%x, 1.0)
  %s1 = c10d::isend(%c, 1, 1, "world")
  c10d::wait_tensor(%s1)
  return %c
}
graph @l ranks 1 (%x: f32[4, 8]) -> (f32[4, 8]) {
  %b1 = aten::zeros([4, 8], f32)
  %q1 = c10d::irecv_(%b1, 0, 1, "world")
  %h1 = c10d::wait_tensor(%q1)
  %b0 = aten::mul(%h1, 0.0)
  %q0 = c10d::irecv_(%b0, 0, 0, "world")
  %h0 = c10d::wait_tensor(%q0)
  %o = aten::add(%h0, %h1)
  return %o
}
)";

// Compiles and loads this rank's graph of `text`, runs it 3 times; every run
// equals eager bitwise. Returns the plan's rendezvous flags of the sends, in
// order, and sets `staged` to the staged copies of the compiled runs.
std::vector<bool> run_compiled(const char* text, int world, int64_t* staged, int max_in_flight = 8) {
  const int rank = dist::world().rank();
  auto g = ir::parse_graph(text, {"t.sf", rank, world});
  passes::PipelineOptions o;
  o.schedule.max_in_flight = max_in_flight;
  passes::optimize(*g, o);
  CompiledProgram prog(std::move(g));
  auto eager = run_eager(*ir::parse_graph(text, {"t.sf", rank, world}), seeded_inputs(prog.graph(), 0, rank));
  auto in = seeded_inputs(prog.graph(), 0, rank);
  const auto before = dist::staged_copy_stats();
  for (int i = 0; i < 3; ++i) {
    auto out = prog.run(in);
    SF_CHECK(first_bitwise_difference(eager[0], out[0]).empty(), "rank {} run {}: {}", rank, i,
             first_bitwise_difference(eager[0], out[0]));
  }
  *staged = int64_t(dist::staged_copy_stats().count - before.count);
  std::vector<bool> flags;
  for (const auto& s : prog.graph().exec_plan()->instructions)
    if (s.node->schema().name == "isend") flags.push_back(!s.rendezvous.empty() && s.rendezvous[0]);
  return flags;
}

int pipeline_job(int world) {
  dist::init();
  int64_t staged = 0;
  const auto flags = run_compiled(kPipeline, world, &staged);
  const int rank = dist::world().rank();
  const size_t sends = rank == world - 1 ? 0 : 2;  // the last stage only receives
  SF_CHECK(flags == std::vector<bool>(sends, true), "rank {}: not every send is rendezvous", rank);
  SF_CHECK(staged == 0, "rank {}: {} staged copies in 3 runs, expected none", rank, staged);
  return 0;
}

TEST(RendezvousSends, PipelineStagesCopyNothingAtTwoRanks) {
  EXPECT_EQ(runtime::launch_fn(2, [] { return pipeline_job(2); }), 0);
}

TEST(RendezvousSends, PipelineStagesCopyNothingAtFourRanks) {
  EXPECT_EQ(runtime::launch_fn(4, [] { return pipeline_job(4); }), 0);
}

TEST(RendezvousSends, ALateReceiveKeepsItsSendEagerAndNothingDeadlocks) {
  EXPECT_EQ(runtime::launch_fn(2,
                               [] {
                                 dist::init();
                                 int64_t staged = 0;
                                 const auto flags = run_compiled(kLateReceive, 2, &staged, /*max_in_flight=*/1);
                                 if (dist::world().rank() == 0)
                                   SF_CHECK(flags == (std::vector<bool>{false, true}),
                                            "rank 0: expected tag 0 eager and tag 1 rendezvous, got {}",
                                            fmt::join(flags, ", "));
                                 return 0;
                               }),
            0);
}

// A symm_mem all_reduce, then a lone self-send posted before its own receive:
// posted first, it would go eager (into a slot and out again) every run. The
// symm_mem op is a collective of "world" to the model (ir::is_symm_mem_collective);
// before, the model took it for an unknown effect and kept every lone send eager
// (tests/diff/repro/symm_plan_differs_rank_view.sf staged 1536 bytes on each end).
constexpr const char* kSymmMemThenSelfSend = R"(graph @m(%x: f32[4, 8]) -> (f32[4, 8]) {
  %a = aten::mul(%x, 2.0)
  %r = symm_mem::one_shot_all_reduce(%a, "sum", "world")
  %b = aten::zeros([4, 8], f32)
  %s = c10d::isend(%r, rank, 0, "world")
  %q = c10d::irecv_(%b, rank, 0, "world")
  c10d::wait_tensor(%s)
  %h = c10d::wait_tensor(%q)
  %o = aten::add(%h, %x)
  return %o
}
)";

int symm_mem_then_self_send_job(int world) {
  dist::init();
  int64_t staged = 0;
  const auto flags = run_compiled(kSymmMemThenSelfSend, world, &staged);
  SF_CHECK(flags == std::vector<bool>{true}, "rank {}: the lone send is not rendezvous", dist::world().rank());
  SF_CHECK(staged == 0, "rank {}: {} staged copies in 3 runs, expected none", dist::world().rank(), staged);
  return 0;
}

TEST(RendezvousSends, ALoneSendBesideASymmMemCollectiveIsRendezvousAtTwoRanks) {
  EXPECT_EQ(runtime::launch_fn(2, [] { return symm_mem_then_self_send_job(2); }), 0);
}

TEST(RendezvousSends, ALoneSendBesideASymmMemCollectiveIsRendezvousAtThreeRanks) {
  EXPECT_EQ(runtime::launch_fn(3, [] { return symm_mem_then_self_send_job(3); }), 0);
}

}  // namespace
}  // namespace symmflow::exec
