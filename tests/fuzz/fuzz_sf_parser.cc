// libFuzzer: any bytes as a .sf file. Parsed for one rank and as a whole program,
// verified and printed; a symmflow::Error is the expected answer to bad input,
// anything else (another exception, a sanitizer report, a stack overflow) is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "symmflow/ir/parser.h"
#include "symmflow/ir/printer.h"
#include "symmflow/ir/verifier.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace ir = symmflow::ir;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    auto g = ir::parse_graph(text, {.file = "fuzz.sf", .rank = 1, .world = 2});
    ir::verify(*g);
    (void)ir::print_graph(*g);
  } catch (const symmflow::Error&) {
  }
  try {
    (void)ir::print_program(ir::parse_program(text, {.file = "fuzz.sf", .rank = 0, .world = 3}));
  } catch (const symmflow::Error&) {
  }
  return 0;
}
