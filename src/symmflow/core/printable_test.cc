#include "symmflow/core/printable.h"

#include <gtest/gtest.h>

#include "symmflow/core/ivalue.h"

namespace symmflow {
namespace {

TEST(Printable, EscapesNulAndBinaryBytesAndKeepsNewlines) {
  using namespace std::string_literals;
  EXPECT_EQ(printable("f32[4]"), "f32[4]");
  EXPECT_EQ(printable("a\0b"s), "a\\x00b");
  EXPECT_EQ(printable("\x93NUMPY\x7f\xff\t"), "\\x93NUMPY\\x7f\\xff\\x09");
  EXPECT_EQ(printable("line 1\nline 2"), "line 1\nline 2");
  // Idempotent: a message escaped twice reads the same.
  EXPECT_EQ(printable(printable("a\0b"s)), "a\\x00b");
}

TEST(Printable, StringArgumentsInMessagesAreEscaped) {
  using namespace std::string_literals;
  // IValue::repr is how an op's error shows a string argument.
  EXPECT_EQ(IValue("wor\0ld"s).repr(), "\"wor\\x00ld\"");
}

}  // namespace
}  // namespace symmflow
