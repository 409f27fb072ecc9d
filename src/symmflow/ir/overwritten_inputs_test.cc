#include "symmflow/ir/overwritten_inputs.h"

#include <gtest/gtest.h>

#include "symmflow/ir/alias.h"
#include "symmflow/ir/parser.h"

namespace symmflow::ir {
namespace {

std::vector<bool> overwritten(const std::string& text) {
  auto g = parse_graph(text);
  return overwritten_before_read(*g, storage_roots(*g));
}

// halo2d's scratch grid in small: the edge columns copied, the rest computed
// into a slice, then read whole. The first input is read, so it is not.
TEST(OverwrittenInputs, AnInputWrittenInPartsBeforeAnyReadIsOverwritten) {
  auto o = overwritten(R"(graph @f(%u: f32[4, 6], %v: f32[4, 6]) -> (f32[]) {
  %ul = aten::slice(%u, 1, 0, 1)
  %vl = aten::slice(%v, 1, 0, 1)
  aten::copy_(%vl, %ul)
  %ur = aten::slice(%u, 1, 1, None)
  %vr = aten::slice(%v, 1, 1, None)
  %t = aten::mul(%ur, 2.0)
  aten::copy_(%vr, %t)
  %s = aten::sum(%v)
  return %s
})");
  EXPECT_EQ(o, (std::vector<bool>{false, true}));
}

TEST(OverwrittenInputs, AReadOfAByteNotYetWrittenKeepsTheCopyIn) {
  auto o = overwritten(R"(graph @f(%v: f32[4, 6], %w: f32[4, 6]) -> (f32[]) {
  %vl = aten::slice(%v, 1, 0, 1)
  aten::fill_(%vl, 1.0)
  %s = aten::sum(%v)
  %vr = aten::slice(%v, 1, 1, None)
  aten::fill_(%vr, 2.0)
  return %s
})");
  EXPECT_EQ(o, (std::vector<bool>{false, false}));
}

// A read of exactly the bytes written so far is fine: column 0, then the rest.
TEST(OverwrittenInputs, AReadOfWrittenBytesOnlyDoesNotCount) {
  auto o = overwritten(R"(graph @f(%v: f32[4, 6]) -> (f32[4, 1]) {
  %vl = aten::slice(%v, 1, 0, 1)
  aten::fill_(%vl, 1.0)
  %y = aten::mul(%vl, 3.0)
  %vr = aten::slice(%v, 1, 1, None)
  aten::zero_(%vr)
  return %y
})");
  EXPECT_EQ(o, (std::vector<bool>{true}));
}

// add_ reads what it writes; a column never written leaves the old bytes live
// (the copy back would return them).
TEST(OverwrittenInputs, InPlaceArithmeticAndPartialWritesAreNotOverwrites) {
  EXPECT_EQ(overwritten(R"(graph @f(%v: f32[8]) -> () {
  aten::add_(%v, 1.0)
  aten::fill_(%v, 0.0)
  return
})"),
            (std::vector<bool>{false}));
  EXPECT_EQ(overwritten(R"(graph @f(%v: f32[4, 6]) -> () {
  %vr = aten::slice(%v, 1, 1, None)
  aten::fill_(%vr, 2.0)
  return
})"),
            (std::vector<bool>{false}));
}

// The self of copy_ is written, its source read: copying an input onto itself
// reads it first.
TEST(OverwrittenInputs, CopySourceOfTheSameInputIsARead) {
  EXPECT_EQ(overwritten(R"(graph @f(%v: f32[2, 4]) -> () {
  %a = aten::slice(%v, 0, 0, 1)
  %b = aten::slice(%v, 0, 1, 2)
  aten::copy_(%a, %b)
  aten::copy_(%b, %a)
  return
})"),
            (std::vector<bool>{false}));
}

// A receive into the whole input (the rule before bytes) still counts, and one
// into half of it does not, until the other half is written too.
TEST(OverwrittenInputs, ReceivesWriteWithoutReading) {
  auto o = overwritten(R"(graph @f(%x: f32[8], %y: f32[2, 4]) -> () {
  %y0 = aten::slice(%y, 0, 0, 1)
  %y1 = aten::slice(%y, 0, 1, 2)
  %h = c10d::irecv_(%x, 0, 0, "world")
  %x2 = c10d::wait_tensor(%h)
  %h2 = c10d::irecv_(%y0, 0, 1, "world")
  %y2 = c10d::wait_tensor(%h2)
  aten::fill_(%y1, 0.0)
  return
})");
  EXPECT_EQ(o, (std::vector<bool>{true, true}));
}

}  // namespace
}  // namespace symmflow::ir
