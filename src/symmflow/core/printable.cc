#include "symmflow/core/printable.h"

#include <fmt/format.h>

namespace symmflow {

std::string printable(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (unsigned char c : bytes) {
    if ((c >= 0x20 && c < 0x7f) || c == '\n') out += char(c);
    else out += fmt::format("\\x{:02x}", c);
  }
  return out;
}

}  // namespace symmflow
