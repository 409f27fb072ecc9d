// Malformed schemas: each error names what was expected and what was found, and
// points at the exact column.
#include <gtest/gtest.h>

#include "symmflow/schema/parser.h"

namespace symmflow {
namespace {

struct BadSchema {
  const char* text;
  int column;
  const char* message;  // the part after "schema:L:C: "
};

const BadSchema kBad[] = {
    // missing ')' / stray comma / empty argument name
    {"aten::f(Tensor a, int b -> ()", 25, "expected ',' or ')' but found '->'"},
    {"aten::f(Tensor a,) -> ()", 18, "expected a type but found ')'"},
    {"aten::f(Tensor a,, int b) -> ()", 18, "expected a type but found ','"},
    {"aten::f(Tensor, int b) -> ()", 15, "expected an argument name but found ','"},
    {"aten::f(Tensor a, int) -> ()", 22, "expected an argument name but found ')'"},
    // missing arrow, bad returns, trailing junk
    {"aten::f(Tensor a) Tensor", 19, "expected '->' but found 'Tensor'"},
    {"aten::f(Tensor a)", 18, "expected '->' but found end of schema"},
    {"aten::f(Tensor a) ->", 21, "expected a type but found end of schema"},
    {"aten::f(Tensor a) -> (Tensor, Tensor", 37, "expected ',' or ')' but found end of schema"},
    {"aten::f(Tensor a) -> Tensor junk more", 34, "expected end of schema but found 'more'"},
    {"aten::f(Tensor a) -> Tensor)", 28, "expected end of schema but found ')'"},
    // types
    {"aten::f(Tensr a) -> ()", 9, "unknown type 'Tensr'"},
    {"aten::f(Tensor[ a) -> ()", 17, "expected ']' but found 'a'"},
    {"aten::f(int[2 a) -> ()", 15, "expected ']' but found 'a'"},
    {"aten::f(Tensor?? a) -> ()", 16, "'?' applied to a type that is already optional"},
    {"aten::f(int[][] a) -> ()", 14, "nested list types are not supported"},
    {"myns::my_collective(SymmMemTensr x) -> Tensor", 21, "unknown type 'SymmMemTensr'"},
    // aliases
    {"aten::f(Tensor(a!!) x) -> ()", 18, "expected ')' but found '!'"},
    {"aten::f(Tensor() x) -> ()", 16, "expected an alias set name or '*' but found ')'"},
    {"aten::f(Tensor(a -> ) x) -> ()", 21, "expected an alias set name or '*' but found ')'"},
    {"aten::f(Tensor(a x) -> ()", 18, "expected ')' but found 'x'"},
    {"aten::f(Tensor[](a)[] x) -> ()", 20, "nested list types are not supported"},
    {"aten::f(Tensor?(a) x) -> ()", 16, "expected an argument name but found '('"},
    // strings and numbers
    {"aten::f(str s='sum) -> ()", 15, "unterminated string literal"},
    {"aten::f(str s=\"sum) -> ()", 15, "unterminated string literal"},
    {"aten::f(float x=1.2.3) -> ()", 17, "malformed number '1.2.3'"},
    {"aten::f(float x=1e) -> ()", 17, "malformed number '1e'"},
    {"aten::f(int x=12abc) -> ()", 15, "malformed number '12abc'"},
    {"aten::f(int x=99999999999999999999) -> ()", 15,
     "integer '99999999999999999999' does not fit in 64 bits"},
    {"aten::f(int x=) -> ()", 15, "expected a default value but found ')'"},
    {"aten::f(int[] x=[1, 2) -> ()", 22, "expected ',' or ']' in a list default but found ')'"},
    {"aten::f(float x=-foo) -> ()", 18, "expected a number or 'inf' after '-' but found 'foo'"},
    // keyword-only marker and varargs
    {"aten::f(Tensor a, *, *, int b) -> ()", 22,
     "'*' (start of keyword-only arguments) appears twice"},
    {"aten::f(Tensor a, *) -> ()", 20, "expected a keyword-only argument after '*' but found ')'"},
    {"aten::f(Tensor a, *=1) -> ()", 20, "expected ',' or ')' but found '='"},
    {"aten::f(str s, ..., int b) -> ()", 19, "expected ')' but found ','"},
    // names
    {"aten::f(Tensor a, int a) -> ()", 23, "duplicate argument name 'a'"},
    {"f(Tensor a) -> ()", 1,
     "expected a namespace ('ns::f') because no default namespace was given"},
    {"aten::(Tensor a) -> ()", 7, "expected an operator name after '::' but found '('"},
    {"(Tensor a) -> ()", 1, "expected an operator name but found '('"},
    {"aten::f.(Tensor a) -> ()", 9, "expected an overload name after '.' but found '('"},
    {"aten::f(Tensor a) -> () @", 25, "unexpected character '@'"},
    {"", 1, "expected an operator name but found end of schema"},
};

TEST(SchemaParseErrors, EachPointsAtItsColumn) {
  for (const auto& bad : kBad) {
    SCOPED_TRACE(bad.text);
    try {
      parse_schema(bad.text);
      ADD_FAILURE() << "expected a SchemaParseError";
    } catch (const SchemaParseError& e) {
      EXPECT_EQ(e.column(), bad.column);
      EXPECT_EQ(e.line(), 1);
      std::string first_line = std::string(e.what()).substr(0, std::string(e.what()).find('\n'));
      EXPECT_EQ(first_line, fmt::format("schema:1:{}: {}", bad.column, bad.message));
    }
  }
}

TEST(SchemaParseErrors, AtLeastTwentyCases) { EXPECT_GE(std::size(kBad), 20u); }

TEST(SchemaParseErrors, MessageShowsLineAndCaret) {
  try {
    parse_schema("aten::f(Tensor a, int,) -> ()");
    FAIL();
  } catch (const SchemaParseError& e) {
    EXPECT_STREQ(e.what(),
                 "schema:1:22: expected an argument name but found ','\n"
                 "aten::f(Tensor a, int,) -> ()\n"
                 "                     ^");
  }
}

TEST(SchemaParseErrors, MultiLineSchemaReportsLineAndColumn) {
  try {
    parse_schema("aten::f(Tensor a,\n        int b c) -> ()");
    FAIL();
  } catch (const SchemaParseError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.column(), 15);
    EXPECT_NE(std::string(e.what()).find("\n        int b c) -> ()\n              ^"),
              std::string::npos)
        << e.what();
  }
}

TEST(SchemaParseErrors, BinaryBytesAreEscapedAndTheCaretStaysUnderThem) {
  using namespace std::string_literals;
  try {
    parse_schema("aten::f(Tensor\x93 a,\0) -> ()"s);
    FAIL();
  } catch (const SchemaParseError& e) {
    EXPECT_EQ(e.column(), 15);
    // Before: the raw byte, and the NUL of the source line ended what() early.
    EXPECT_EQ(std::string(e.what()),
              "schema:1:15: unexpected character '\\x93'\n"
              "aten::f(Tensor\\x93 a,\\x00) -> ()\n"
              "              ^");
  }
}

TEST(SchemaParseErrors, TokenLongerThanTheLimitIsAnError) {
  try {
    parse_schema("aten::f(str s='" + std::string(5000, 'x') + "') -> ()");
    FAIL();
  } catch (const SchemaParseError& e) {
    EXPECT_EQ(e.column(), 15);
    EXPECT_EQ(std::string(e.what()).substr(0, std::string(e.what()).find('\n')),
              "schema:1:15: a token of 5002 bytes; the longest accepted is 4096");
  }
  EXPECT_NO_THROW(parse_schema("aten::f(str s='" + std::string(4000, 'x') + "') -> ()"));
}

TEST(SchemaParseErrors, ThirtyThousandBracketsAreAnErrorNotACrash) {
  EXPECT_THROW(parse_schema("aten::f(Tensor" + std::string(30000, '[') + " a) -> ()"), SchemaParseError);
  EXPECT_THROW(parse_schema("aten::f(Tensor" + std::string(30000, '(') + " a) -> ()"), SchemaParseError);
}

TEST(SchemaParseErrors, IsASymmflowError) {
  EXPECT_THROW(parse_schema("aten::f("), Error);
  EXPECT_THROW(parse_type("Tensor["), SchemaParseError);
  EXPECT_THROW(parse_type("Tensor x"), SchemaParseError);
}

}  // namespace
}  // namespace symmflow
