// User text (a .sf file, a schema, a .npy header) echoed into an error message
// goes through printable(): bytes that are not printable ASCII appear as `\x00`,
// so a binary file cannot garble the terminal and a NUL cannot cut the message
// short (what() is a C string). Newlines are kept: they separate the lines of a
// message (a schema error's caret line).
//
//   fail("unexpected character '{}'", printable(std::string_view(&c, 1)));  // '\x00'
#pragma once
#include <string>
#include <string_view>

namespace symmflow {

std::string printable(std::string_view bytes);

}  // namespace symmflow
