// libFuzzer: any bytes as an operator schema, then as a type. A SchemaParseError
// (a symmflow::Error) is the expected answer to bad input; a parsed schema must
// print and parse back.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "symmflow/schema/parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const symmflow::FunctionSchema s = symmflow::parse_schema(text, "fuzz");
    // function_schema.h: the printer is exact. A schema that does not come back
    // equal is a bug; abort() makes libFuzzer keep the input.
    if (!(symmflow::parse_schema(s.to_string()) == s)) std::abort();
  } catch (const symmflow::Error&) {
  }
  try {
    (void)symmflow::parse_type(text);
  } catch (const symmflow::Error&) {
  }
  return 0;
}
