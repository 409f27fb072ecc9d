#include "symmflow/runtime/uncaught.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include <fmt/format.h>

#include "symmflow/runtime/world.h"

namespace symmflow::dist::detail {

namespace {

std::terminate_handler g_previous = nullptr;

[[noreturn]] void on_terminate() {
  std::exception_ptr e = std::current_exception();
  if (!e) {  // std::terminate called for another reason: keep its behaviour
    if (g_previous) g_previous();
    std::abort();
  }
  std::string msg = "unknown exception";
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    msg = x.what();
  } catch (...) {
  }
  try {
    if (is_initialized()) {
      const int rank = backend().rank();
      backend().abort(fmt::format("rank {} failed: {}", rank, msg));
      if (!report_failure(msg)) std::fprintf(stderr, "symmflow: rank %d: %s\n", rank, msg.c_str());
    } else {
      std::fprintf(stderr, "symmflow: error: %s\n", msg.c_str());
    }
  } catch (...) {
    std::fprintf(stderr, "symmflow: error: %s\n", msg.c_str());
  }
  std::fflush(nullptr);
  _exit(1);
}

}  // namespace

void install_uncaught_handler() {
  std::terminate_handler current = std::get_terminate();
  if (current == &on_terminate) return;
  g_previous = current;
  std::set_terminate(&on_terminate);
}

}  // namespace symmflow::dist::detail
