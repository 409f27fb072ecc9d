#include "symmflow/ir/parser.h"

#include <gtest/gtest.h>

#include "symmflow/core/error.h"
#include "symmflow/ir/int_expr.h"
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

// Hostile or corrupt input (issue 20): an error with a location, never a crash,
// a wrapped size or an exception from the standard library.
std::string one_input(std::string_view type) {
  return fmt::format("graph @f(%x: {}) -> () {{\n  return\n}}", type);
}

TEST(ParserLimits, RejectsTypeWhoseElementCountOverflowsInt64) {
  // 2^32 * (2^32 + 1) wrapped to 2^32 elements, and the run filled memory.
  std::string e = error_of(one_input("f32[4294967296, 4294967297]"));
  EXPECT_EQ(e.rfind("t.sf:1:14: type f32[4294967296, 4294967297]: ", 0), 0u) << e;
  EXPECT_NE(e.find("4294967296 * 4294967297 overflows"), std::string::npos) << e;
  // 2^64 wrapped to 0 elements, and `--check` said OK with no data.
  e = error_of(one_input("f32[4294967296, 4294967296]"));
  EXPECT_EQ(e.rfind("t.sf:1:14: type f32[4294967296, 4294967296]: ", 0), 0u) << e;
  // The elements fit in int64 but the bytes do not.
  e = error_of(one_input("f64[2305843009213693952]"));
  EXPECT_NE(e.find("with 8-byte elements"), std::string::npos) << e;
  EXPECT_EQ(error_of(one_input("bool[0, 4294967296, 2]")), "");
}

TEST(ParserLimits, RejectsDimensionOf24DigitsWithItsLocation) {
  EXPECT_EQ(error_of(one_input("f32[4, 123456789012345678901234]")),
            "t.sf:1:21: integer 123456789012345678901234 does not fit in 64 bits (the largest is "
            "9223372036854775807)");
  EXPECT_EQ(error_of(one_input("f32[9223372036854775808]")).rfind("t.sf:1:18: integer 9223372036854775808 ", 0), 0u);
}

TEST(ParserLimits, IntegerExpressionsThatOverflowAreErrors) {
  auto zeros = [](std::string_view n) {
    return fmt::format("graph @f() -> () {{\n  %z = aten::zeros([{}], dtype=f32)\n  return\n}}", n);
  };
  std::string e = error_of(zeros("9223372036854775807 * 2"));
  EXPECT_NE(e.find("t.sf:2:21: a rank/world expression: 9223372036854775807 * 2 overflows"), std::string::npos) << e;
  e = error_of(zeros("(-9223372036854775807 - 1) / -1"));
  EXPECT_NE(e.find("overflows a 64-bit integer"), std::string::npos) << e;
  EXPECT_EQ(floor_mod(INT64_MAX, -2), -1);
  EXPECT_EQ(floor_mod(INT64_MIN, -1), 0);
  EXPECT_THROW(floor_div(INT64_MIN, -1), Error);
}

TEST(ParserLimits, FloatLiteralsPastTheDoubleRangeAreInfinityNotAnException) {
  EXPECT_EQ(error_of("graph @f(%x: f32[4]) -> (f32[4]) {\n  %y = aten::mul(%x, 1e999)\n"
                     "  %z = aten::mul(%y, 1e-999)\n  return %z\n}"),
            "");
}

TEST(ParserLimits, DeepNestingIsAnErrorNotAStackOverflow) {
  const std::string lists = "graph @f() -> () {\n  %z = aten::zeros(" + std::string(30000, '[') + ")\n  return\n}";
  EXPECT_EQ(error_of(lists), "t.sf:2:276: nesting deeper than 256 levels (brackets, parentheses or operators in "
                             "one expression)");
  const std::string parens = "graph @f() -> () {\n  %z = aten::zeros([" + std::string(30000, '(') + "1])\n  return\n}";
  EXPECT_NE(error_of(parens).find("nesting deeper than 256 levels"), std::string::npos);
  const std::string minus = "graph @f() -> () {\n  %z = aten::zeros([" + std::string(30000, '-') + "1])\n  return\n}";
  EXPECT_NE(error_of(minus).find("nesting deeper than 256 levels"), std::string::npos);
  // A long chain of operators builds a tree as deep (evaluated by recursion).
  std::string chain = "1";
  for (int i = 0; i < 100000; ++i) chain += "+1";
  EXPECT_NE(error_of("graph @f() -> () {\n  %z = aten::zeros([" + chain + "], dtype=f32)\n  return\n}")
                .find("nesting deeper than 256 levels"),
            std::string::npos);
  // Real programs stay far below: 100 levels parse.
  EXPECT_EQ(error_of("graph @f() -> () {\n  %z = aten::zeros([" + std::string(100, '(') + "4" +
                     std::string(100, ')') + "], dtype=f32)\n  return\n}"),
            "");
}

TEST(ParserLimits, RejectsTokenLongerThanTheLimit) {
  const std::string e = error_of("graph @f(%x: f32[4]) -> (f32[4]) {\n  %y = aten::mul(%x, \"" +
                                 std::string(5000, 'a') + "\")\n  return %y\n}");
  EXPECT_EQ(e, "t.sf:2:22: a token of 5000 bytes; the longest accepted is 4096");
}

TEST(ParserLimits, PrintsBinaryBytesEscapedAndANulDoesNotCutTheMessage) {
  using namespace std::string_literals;
  EXPECT_EQ(error_of("graph @f(%x: f32[4]) \0-> (f32[4])"s), "t.sf:1:22: unexpected character '\\x00'");
  EXPECT_EQ(error_of("graph @f(%x: f32[4]) -> (f32[4]) {\n  %y = aten::mul(%x, 2.0) \x93\xff"s),
            "t.sf:2:27: unexpected character '\\x93'");
  // A string argument echoed back by the op's error.
  const std::string e = error_of("graph @f(%x: f32[4]) -> (f32[4]) {\n  %y = aten::mul(%x, \"a\0b\")\n  return %y\n}"s);
  EXPECT_NE(e.find("\"a\\x00b\""), std::string::npos) << e;
  EXPECT_EQ(e.find('\0'), std::string::npos);
}

}  // namespace
}  // namespace symmflow::ir
