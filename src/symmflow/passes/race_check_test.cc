// race_check: each kind of eager race is rejected with both ops and their
// lines; race-free programs (the blog kernel, a halo exchange reading the rows
// it does not receive into, waits through another name) are accepted.
#include "symmflow/passes/race_check.h"

#include <gtest/gtest.h>

#include "symmflow/ir/parser.h"

namespace symmflow::passes {
namespace {

// "" when the program is accepted, else the error's message.
std::string race_of(std::string_view body, std::string_view sig = "%x: f32[8], %y: f32[8]",
                    std::string_view ret = "f32[8]") {
  std::string text = fmt::format("graph @f({}) -> ({}) {{\n{}}}\n", sig, ret, body);
  auto g = ir::parse_graph(text, {"t.sf", 0, 2});
  try {
    check_races(*g);
  } catch (const RaceError& e) {
    return e.what();
  }
  return "";
}

constexpr const char* kRing = R"(  %s0, %r0 = c10d::batch_isend_irecv(["isend", "irecv"], [(rank+1)%world, (rank-1+world)%world], [0, 0], [%x0, %y0], "world")
  %t0 = aten::mul(%x0, 2.0)
  %t1 = aten::add(%t0, 1.0)
  c10d::wait_tensor(%s0)
  c10d::wait_tensor(%r0)
  %a = aten::add(%y0, %t1)
  %s1, %r1 = c10d::batch_isend_irecv(["isend", "irecv"], [(rank+1)%world, (rank-1+world)%world], [0, 0], [%a, %y1], "world")
  %t2 = aten::mul(%a, 1.000244140625)
  c10d::wait_tensor(%s1)
  c10d::wait_tensor(%r1)
  %out = aten::add(%y1, %t2)
  return %out
)";
constexpr const char* kRingSig = "%x0: f32[4096], %y0: f32[4096], %y1: f32[4096]";

TEST(RaceCheck, TheBlogKernelIsAccepted) { EXPECT_EQ(race_of(kRing, kRingSig, "f32[4096]"), ""); }

TEST(RaceCheck, ReadOfAReceiveBufferBeforeItsWait) {
  // The blog kernel with its first add moved above the waits. Columns are the
  // op's (after `%a = `), as in every error about a node.
  std::string racy = kRing;
  const std::string add = "  %a = aten::add(%y0, %t1)\n";
  racy.erase(racy.find(add), add.size());
  racy.insert(racy.find("  c10d::wait_tensor(%s0)"), add);
  EXPECT_EQ(race_of(racy, kRingSig, "f32[4096]"),
            "t.sf:5:8: error: race: aten::add reads %y0 while c10d::batch_isend_irecv at t.sf:2:14 still "
            "receives into it; wait for it first (c10d::wait_tensor(%r0) at t.sf:7:3)");
}

TEST(RaceCheck, ReadThroughAView) {
  std::string e = race_of(R"(  %r = c10d::irecv_(%y, 1, 0, "world")
  %v = aten::slice(%y, 0, 2, 4)
  %t = aten::mul(%v, 2.0)
  c10d::wait_tensor(%r)
  return %t
)", "%y: f32[8]", "f32[2]");
  EXPECT_EQ(e, "t.sf:4:8: error: race: aten::mul reads %v, which shares bytes with %y, while c10d::irecv_ at "
               "t.sf:2:8 still receives into %y; wait for it first (c10d::wait_tensor(%r) at t.sf:5:3)");
}

TEST(RaceCheck, WriteOfASendBufferBeforeItsWait) {
  std::string e = race_of(R"(  %s = c10d::isend(%x, 1, 0, "world")
  aten::add_(%x, 1.0)
  c10d::wait_tensor(%s)
  return %x
)");
  EXPECT_EQ(e, "t.sf:3:3: error: race: aten::add_ writes %x while c10d::isend at t.sf:2:8 still sends it; "
               "wait for it first (c10d::wait_tensor(%s) at t.sf:4:3)");
  // Reading a send buffer is fine.
  EXPECT_EQ(race_of(R"(  %s = c10d::isend(%x, 1, 0, "world")
  %t = aten::mul(%x, 2.0)
  c10d::wait_tensor(%s)
  return %t
)"), "");
}

TEST(RaceCheck, WriteOfAReceiveBufferThroughAView) {
  std::string e = race_of(R"(  %r = c10d::irecv_(%y, 1, 0, "world")
  %v = aten::select(%y, 0, 7)
  aten::fill_(%v, 0.0)
  c10d::wait_tensor(%r)
  return %y
)", "%y: f32[8]");
  EXPECT_NE(e.find("t.sf:4:3: error: race: aten::fill_ writes %v, which shares bytes with %y, while "
                   "c10d::irecv_ at t.sf:2:8 still receives into %y"), std::string::npos) << e;
}

TEST(RaceCheck, ACollectiveOnAnInFlightBufferAndASecondReceive) {
  // Collectives are synchronous, but they read and write their tensors.
  EXPECT_NE(race_of(R"(  %r = c10d::irecv_(%y, 1, 0, "world")
  c10d::all_reduce_(%y, "sum", "world")
  c10d::wait_tensor(%r)
  return %y
)", "%y: f32[8]").find("c10d::all_reduce_ writes %y while c10d::irecv_"), std::string::npos);
  // A send of bytes the same batch receives into (receives are posted first).
  std::string e = race_of(R"(  %r, %s = c10d::batch_isend_irecv(["irecv", "isend"], [1, 1], [0, 1], [%y, %y], "world")
  c10d::wait_tensor(%r)
  c10d::wait_tensor(%s)
  return %y
)", "%y: f32[8]");
  EXPECT_NE(e.find("t.sf:2:12: error: race: c10d::batch_isend_irecv sends %y while c10d::batch_isend_irecv at "
                   "t.sf:2:12 still receives into it"), std::string::npos) << e;
}

// A halo exchange: receive into row 0, read rows 1..6 meanwhile (disjoint bytes
// of the same storage), and the even/odd columns of one storage.
TEST(RaceCheck, DisjointBytesOfOneStorageAreAccepted) {
  EXPECT_EQ(race_of(R"(  %ghost = aten::select(%g, 0, 0)
  %inner = aten::slice(%g, 0, 1, 7)
  %r = c10d::irecv_(%ghost, 1, 0, "world")
  %t = aten::mul(%inner, 2.0)
  c10d::wait_tensor(%r)
  %u = aten::add(%g, 1.0)
  return %u
)", "%g: f32[8, 4]", "f32[8, 4]"), "");
  EXPECT_EQ(race_of(R"(  %even = aten::slice(%g, 1, 0, 4, 2)
  %odd = aten::slice(%g, 1, 1, 4, 2)
  %r = c10d::irecv_(%even, 1, 0, "world")
  aten::mul_(%odd, 2.0)
  c10d::wait_tensor(%r)
  return %g
)", "%g: f32[8, 4]", "f32[8, 4]"), "");
  // The last row is in flight: reading rows 1..7 is a race.
  EXPECT_NE(race_of(R"(  %ghost = aten::select(%g, 0, 7)
  %inner = aten::slice(%g, 0, 1, 8)
  %r = c10d::irecv_(%ghost, 1, 0, "world")
  %t = aten::mul(%inner, 2.0)
  c10d::wait_tensor(%r)
  return %t
)", "%g: f32[8, 4]", "f32[7, 4]").find("aten::mul reads %inner, which shares bytes with %ghost,"),
            std::string::npos);
}

TEST(RaceCheck, WaitsRetireAsEagerDoes) {
  // Waiting on the buffer itself (the same tensor as the handle) retires the op.
  EXPECT_EQ(race_of(R"(  %r = c10d::irecv_(%y, 1, 0, "world")
  c10d::wait_tensor(%y)
  %t = aten::mul(%y, 2.0)
  return %t
)"), "");
  // A wait on a view of the storage, with nothing registered on that view,
  // retires every op on the storage.
  EXPECT_EQ(race_of(R"(  %r = c10d::irecv_(%y, 1, 0, "world")
  %v = aten::slice(%y, 0, 0, 2)
  c10d::wait_tensor(%v)
  %t = aten::mul(%y, 2.0)
  return %t
)"), "");
  // Waiting on another op's handle retires only that op.
  std::string e = race_of(R"(  %r = c10d::irecv_(%y, 1, 0, "world")
  %s = c10d::isend(%x, 1, 1, "world")
  c10d::wait_tensor(%s)
  %t = aten::mul(%y, 2.0)
  c10d::wait_tensor(%r)
  return %t
)");
  EXPECT_NE(e.find("t.sf:5:8: error: race: aten::mul reads %y while c10d::irecv_ at t.sf:2:8"), std::string::npos) << e;
}

TEST(RaceCheck, NeverWaitedIsARaceWithTheReturn) {
  std::string e = race_of(R"(  %r = c10d::irecv_(%y, 1, 0, "world")
  return %y
)", "%y: f32[8]");
  EXPECT_EQ(e, "t.sf:2:8: error: race: c10d::irecv_ is never waited: the program returns while it still "
               "receives into %y; wait for it before the return (c10d::wait_tensor(%r))");
}

TEST(RaceCheck, IsAParseErrorAndAPipelineStep) {
  auto g = ir::parse_graph("graph @f(%y: f32[8]) -> (f32[8]) {\n  %r = c10d::irecv_(%y, 1, 0, \"world\")\n"
                           "  %t = aten::neg(%y)\n  c10d::wait_tensor(%r)\n  return %t\n}\n",
                           {"t.sf", 0, 2});
  RaceCheck pass;
  EXPECT_EQ(pass.name(), "race_check");
  try {
    pass.run(*g);
    FAIL() << "expected a race";
  } catch (const ir::ParseError& e) {
    auto* r = dynamic_cast<const RaceError*>(&e);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->node, g->nodes()[1]);
    EXPECT_EQ(r->in_flight, g->nodes()[0]);
  }
}

}  // namespace
}  // namespace symmflow::passes
