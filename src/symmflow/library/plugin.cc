#include "symmflow/library/plugin.h"

#include <dlfcn.h>

#include <mutex>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "symmflow/core/error.h"
#include "symmflow/library/library.h"

namespace symmflow {

void load_library(const std::string& path) {
  // One load at a time: the error sink is per thread, but dlopen runs static
  // initializers on the calling thread, so serializing keeps messages unmixed.
  static std::mutex mu;
  std::lock_guard lock(mu);
  std::vector<std::string> errors;
  detail::set_static_init_error_sink(&errors);
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  detail::set_static_init_error_sink(nullptr);
  if (handle == nullptr) {
    const char* why = dlerror();
    fail("load_library('{}'): dlopen failed: {}", path, why ? why : "unknown error");
  }
  // The library stays loaded (never dlclose'd): its kernels may be referenced by
  // compiled programs for the rest of the process.
  if (!errors.empty())
    fail("load_library('{}'): {} registration(s) failed:\n{}", path, errors.size(),
         fmt::join(errors, "\n"));
}

}  // namespace symmflow
