// libFuzzer: `symmflow run --inputs DIR` for a one-input program. The first line
// of the input is the parameter's type as written in a .sf signature ("f32[2, 3]"),
// the rest is DIR/x.npy; exec::read_input_file finds, reads and checks it against
// the parsed type. A symmflow::Error is the expected answer; anything else is a bug.
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "symmflow/exec/input_files.h"
#include "symmflow/ir/parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A char array, not a std::string: the cleanup at exit must not outlive it.
  static char dir[] = "/tmp/sf_fuzz_inputs.XXXXXX";
  static const bool made = [] {
    if (!mkdtemp(dir)) std::abort();
    std::atexit([] {  // nothing left in /tmp after a run
      std::remove((std::string(dir) + "/x.npy").c_str());
      ::rmdir(dir);
    });
    return true;
  }();
  (void)made;
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  const size_t nl = all.find('\n');
  if (nl == std::string_view::npos) return 0;
  const std::string sig = "graph @f(%x: " + std::string(all.substr(0, nl)) + ") -> () {\n  return\n}\n";
  const std::string_view npy = all.substr(nl + 1);
  FILE* f = std::fopen((std::string(dir) + "/x.npy").c_str(), "wb");
  if (!f || std::fwrite(npy.data(), 1, npy.size(), f) != npy.size() || std::fclose(f) != 0) std::abort();
  try {
    auto g = symmflow::ir::parse_graph(sig, {.file = "fuzz.sf"});
    if (g->inputs().size() == 1 && g->inputs()[0]->is_tensor())
      (void)symmflow::exec::read_input_file(dir, "x", g->inputs()[0]->type(), 0);
  } catch (const symmflow::Error&) {
  }
  return 0;
}
