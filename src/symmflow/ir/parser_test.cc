#include "symmflow/ir/parser.h"

#include <gtest/gtest.h>

#include "symmflow/ir/printer.h"

namespace symmflow::ir {
namespace {

constexpr const char* kRing = R"(# the blog's kernel
graph @ring_overlap(%x0: f32[4096], %y0: f32[4096], %y1: f32[4096]) -> (f32[4096]) {
  %s0, %r0 = c10d::batch_isend_irecv(["isend", "irecv"], [(rank+1)%world, (rank-1+world)%world], [0, 0], [%x0, %y0], "world")
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
}
)";

std::string error_of(std::string_view text, int rank = 0, int world = 1) {
  try {
    parse_graph(text, {"t.sf", rank, world});
  } catch (const ParseError& e) {
    return e.what();
  }
  return "";
}

TEST(Parser, BlogKernelParsesAndResolvesOverloads) {
  auto g = parse_graph(kRing, {"ring.sf", 0, 4});
  ASSERT_EQ(g->size(), 11u);
  EXPECT_EQ(g->nodes()[0]->op_name(), "c10d::batch_isend_irecv");
  EXPECT_EQ(g->nodes()[1]->op_name(), "aten::mul.Scalar");
  EXPECT_EQ(g->nodes()[5]->op_name(), "aten::add.Tensor");
  // (rank-1+world)%world on rank 0 of 4 is 3; the expression is kept for printing.
  const Arg& peers = g->nodes()[0]->arg(1);
  EXPECT_EQ(peers.elems[0].constant.to_int(), 1);
  EXPECT_EQ(peers.elems[1].constant.to_int(), 3);
  EXPECT_EQ(g->outputs()[0]->type().str(), "f32[4096]");
}

TEST(Parser, RoundTripIsExact) {
  for (int rank : {0, 3}) {
    auto g = parse_graph(kRing, {"ring.sf", rank, 4});
    std::string once = print_graph(*g);
    auto g2 = parse_graph(once, {"ring.sf", rank, 4});
    EXPECT_EQ(print_graph(*g2), once);
    EXPECT_NE(once.find("(rank+1)%world"), std::string::npos) << once;
    EXPECT_NE(once.find("(rank-1+world)%world"), std::string::npos) << once;
  }
}

TEST(Parser, OverloadsAsPyTorchResolvesThem) {
  auto g = parse_graph(R"(graph @f(%x: f32[2, 3]) -> (f32[2, 1], f32[2, 3], f32[4]) {
  %s = aten::sum(%x, [1], true)
  %a = aten::add(%x, 2.0)
  %z = aten::zeros([4], f32)
  %f = aten::full([4], 1.5, dtype=f32)
  return %s, %a, %z
})");
  EXPECT_EQ(g->nodes()[0]->op_name(), "aten::sum.dim_IntList");
  EXPECT_EQ(g->nodes()[1]->op_name(), "aten::add.Scalar");
  EXPECT_EQ(g->nodes()[2]->op_name(), "aten::zeros");
}

TEST(Parser, IntExpressionsRoundLikePython) {
  auto g = parse_graph(R"(graph @f(%x: f32[8]) -> (f32[2]) {
  %v = aten::slice(%x, 0, (rank-1)%world*2, 8-0*((rank-2+2*world)%world))
  return %v
})", {"f.sf", 0, 4});
  EXPECT_EQ(g->nodes()[0]->arg(2).constant.to_int(), 6);  // (-1)%4 is 3, as in Python
  EXPECT_EQ(floor_div(-7, 2), -4);
  EXPECT_EQ(floor_mod(-7, 2), 1);
  EXPECT_EQ(floor_mod(7, -2), -1);
}

TEST(Parser, ErrorsPointAtTheColumn) {
  EXPECT_EQ(error_of("graph @f(%x: f32[4]) -> (f32[4]) {\n  %y = aten::add(%x, %z)\n  return %y\n}"),
            "t.sf:2:22: use of undefined value %z");
  EXPECT_EQ(error_of("graph @f(%x: f32[4]) -> (f32[4]) {\n  %y = aten::add(%x %x)\n  return %y\n}"),
            "t.sf:2:21: expected ')', found %x");
  EXPECT_EQ(error_of("graph @f(%x: f32[4]) -> (f32[4]) {\n  %x = aten::neg(%x)\n  return %x\n}"),
            "t.sf:2:3: value %x is already defined");
  std::string e = error_of("graph @f(%x: f32[4], %y: f32[3]) -> (f32[4]) {\n  %z = aten::add(%x, %y)\n  return %z\n}");
  EXPECT_EQ(e.rfind("t.sf:2:8: aten::add.Tensor: ", 0), 0u) << e;
  EXPECT_NE(e.find("cannot be broadcast"), std::string::npos) << e;
  e = error_of("graph @f(%x: f32[4]) -> (f32[4]) {\n  %a, %b = aten::neg(%x)\n  return %a\n}");
  EXPECT_NE(e.find("aten::neg returns 1 tensor, but 2 names are given"), std::string::npos) << e;
  e = error_of("graph @f(%x: f32[4]) -> (f32[8]) {\n  return %x\n}");
  EXPECT_EQ(e, "t.sf:2:10: return value 0 (%x) is f32[4] but the signature says f32[8]");
  e = error_of("graph @f(%x: f32[4]) -> (f32[4]) {\n  %y = aten::frobnicate(%x)\n  return %y\n}");
  EXPECT_NE(e.find("t.sf:2:8:"), std::string::npos) << e;
  EXPECT_NE(e.find("aten::frobnicate"), std::string::npos) << e;
  // A view must fit the storage it views, as PyTorch checks at setStorage.
  e = error_of("graph @f(%x: f32[12]) -> (f32[4, 4]) {\n  %v = aten::as_strided(%x, [4, 4], [4, 1], 4)\n  return %v\n}");
  EXPECT_EQ(e, "t.sf:2:8: aten::as_strided: setStorage: sizes [4, 4], strides [4, 1], storage offset 4, and itemsize 4 "
               "requiring a storage size of 80 are out of bounds for storage of size 48");
  // ... the storage, not the view: a view of a slice may reach past the slice.
  EXPECT_EQ(error_of("graph @f(%x: f32[12]) -> (f32[8]) {\n  %s = aten::slice(%x, 0, 0, 4)\n"
                     "  %v = aten::as_strided(%s, [8], [1], 4)\n  return %v\n}"), "");
  e = error_of("graph @f(%x: f32[4]) -> (f32[4]) {\n  %y = aten::slice(%x, 0, 1/(world-1), 2)\n  return %y\n}");
  EXPECT_NE(e.find("division by zero"), std::string::npos) << e;
}

}  // namespace
}  // namespace symmflow::ir
