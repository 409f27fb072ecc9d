// first_mismatch on hand-made op lists (no processes): what matches, and the
// message for each way it does not; comm_ops_of on a parsed program; the text
// the ranks exchange round-trips.
#include "symmflow/exec/comm_match.h"

#include <gtest/gtest.h>

#include "symmflow/ir/parser.h"

namespace symmflow::exec {
namespace {

CommOp send(int peer, int64_t bytes, const char* where, int64_t tag = 0) {
  return {CommOp::Kind::send, peer, tag, DType::f32, bytes, "c10d::isend", "world", where};
}
CommOp recv(int peer, int64_t bytes, const char* where, int64_t tag = 0) {
  return {CommOp::Kind::recv, peer, tag, DType::f32, bytes, "c10d::irecv_", "world", where};
}
CommOp all_reduce(int64_t bytes, const char* where) {
  return {CommOp::Kind::collective, -1, 0, DType::f32, bytes, "c10d::all_reduce", "world", where};
}

TEST(CommMatch, ARingAtThreeRanksMatches) {
  std::vector<std::vector<CommOp>> ranks;
  for (int r = 0; r < 3; ++r)
    ranks.push_back({send((r + 1) % 3, 64, "p.sf:2:3"), recv((r + 2) % 3, 64, "p.sf:2:3"), all_reduce(8, "p.sf:5:3")});
  EXPECT_EQ(first_mismatch(ranks), "");
}

TEST(CommMatch, ASelfSendMatchesTheRanksOwnReceive) {
  EXPECT_EQ(first_mismatch({{send(0, 16, "p.sf:2:3"), recv(0, 16, "p.sf:3:3")}}), "");
  EXPECT_NE(first_mismatch({{send(0, 16, "p.sf:2:3")}}).find("has no matching receive on rank 0"), std::string::npos);
}

TEST(CommMatch, AnUnmatchedSendNamesBothRanks) {
  auto m = first_mismatch({{send(1, 16, "p.sf:2:3")}, {}});
  EXPECT_EQ(m, "rank 0's send #1 (send to rank 1 (tag 0, f32, 16 bytes) at p.sf:2:3) has no matching receive on "
               "rank 1 (rank 1 receives nothing from rank 0 with tag 0)");
}

TEST(CommMatch, AnExtraReceiveNamesTheLastSendItCouldHaveMatched) {
  auto m = first_mismatch({{send(1, 16, "p.sf:2:3")}, {recv(0, 16, "p.sf:4:3"), recv(0, 16, "p.sf:6:3")}});
  EXPECT_EQ(m, "rank 1's receive #2 (receive from rank 0 (tag 0, f32, 16 bytes) at p.sf:6:3) has no matching send "
               "on rank 0 (rank 0 sends 1 op to rank 1 with tag 0; its last is the send to rank 1 (tag 0, f32, 16 "
               "bytes) at p.sf:2:3)");
}

TEST(CommMatch, SizesAndDtypesMustAgree) {
  auto m = first_mismatch({{send(1, 16, "p.sf:2:3")}, {recv(0, 32, "p.sf:4:3")}});
  EXPECT_NE(m.find("the sizes differ"), std::string::npos) << m;
  EXPECT_NE(m.find("p.sf:2:3"), std::string::npos) << m;
  EXPECT_NE(m.find("p.sf:4:3"), std::string::npos) << m;
  CommOp r = recv(0, 16, "p.sf:4:3");
  r.dtype = DType::i32;
  EXPECT_NE(first_mismatch({{send(1, 16, "p.sf:2:3")}, {r}}).find("the dtypes differ"), std::string::npos);
}

TEST(CommMatch, TagsAreSeparateChannels) {
  EXPECT_NE(first_mismatch({{send(1, 16, "p.sf:2:3", 1)}, {recv(0, 16, "p.sf:4:3", 0)}}), "");
  EXPECT_EQ(first_mismatch({{send(1, 16, "a", 1), send(1, 8, "b", 0)}, {recv(0, 8, "c", 0), recv(0, 16, "d", 1)}}),
            "");
}

TEST(CommMatch, CollectiveSequencesAreCompared) {
  auto m = first_mismatch({{all_reduce(8, "p.sf:5:3")}, {all_reduce(16, "p.sf:5:3")}});
  EXPECT_EQ(m, "collective #1 on group 'world' differs: rank 0 issues c10d::all_reduce (f32, 8 bytes) at p.sf:5:3, "
               "rank 1 issues c10d::all_reduce (f32, 16 bytes) at p.sf:5:3");
  m = first_mismatch({{all_reduce(8, "p.sf:5:3")}, {}});
  EXPECT_NE(m.find("rank 1 issues no collective (its sequence ends)"), std::string::npos) << m;
}

// symm_mem ops run on the runtime's collectives: every rank of their group
// issues them, so they are matched as collectives (before, they were left out,
// and a rank that skipped one hung in the others' collective).
TEST(CommMatch, SymmMemOpsAreComparedAsCollectivesOfTheirGroup) {
  const char* text = R"(graph @s(%x: f32[4]) -> (f32[4]) {
  %a = symm_mem::one_shot_all_reduce(%x, "sum", "world")
  return %a
})";
  auto g = ir::parse_graph(text, {"s.sf", 0, 2});
  const auto ops = comm_ops_of(*g);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].kind, CommOp::Kind::collective);
  EXPECT_EQ(ops[0].op, "symm_mem::one_shot_all_reduce");
  EXPECT_EQ(ops[0].group, "world");
  EXPECT_EQ(ops[0].bytes, 16);
  const auto m = first_mismatch({ops, {}});
  EXPECT_NE(m.find("rank 0 issues symm_mem::one_shot_all_reduce (f32, 16 bytes) at s.sf:2:8"), std::string::npos) << m;
  EXPECT_NE(m.find("rank 1 issues no collective"), std::string::npos) << m;
}

TEST(CommMatch, APeerOutsideTheWorldIsNamed) {
  EXPECT_NE(first_mismatch({{send(2, 16, "p.sf:2:3")}, {}}).find("names rank 2, but the world has 2 ranks"),
            std::string::npos);
}

TEST(CommMatch, OpsOfAParsedRingAndTheirTextRoundTrip) {
  auto g = ir::parse_graph(R"(graph @ring(%x: f32[4], %y: f32[4]) -> (f32[4]) {
  %s, %r = c10d::batch_isend_irecv(["isend", "irecv"], [(rank+1)%world, (rank-1+world)%world], [0, 0], [%x, %y], "world")
  c10d::wait_tensor(%s)
  c10d::wait_tensor(%r)
  %a = c10d::all_reduce(%y, "sum", "world")
  %b = c10d::wait_tensor(%a)
  return %b
})",
                           {"my ring.sf", 1, 3});
  auto ops = comm_ops_of(*g);
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[0].kind, CommOp::Kind::send);
  EXPECT_EQ(ops[0].peer, 2);
  EXPECT_EQ(ops[1].kind, CommOp::Kind::recv);
  EXPECT_EQ(ops[1].peer, 0);
  EXPECT_EQ(ops[1].bytes, 16);
  EXPECT_EQ(ops[2].kind, CommOp::Kind::collective);
  EXPECT_EQ(ops[0].where, "my ring.sf:2:12");
  auto back = deserialize(serialize(ops));
  ASSERT_EQ(back.size(), ops.size());
  for (size_t i = 0; i < ops.size(); ++i) EXPECT_EQ(serialize({back[i]}), serialize({ops[i]}));
  EXPECT_EQ(back[0].where, "my ring.sf:2:12");
}

}  // namespace
}  // namespace symmflow::exec
