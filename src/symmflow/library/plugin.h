// Plugins: shared libraries of ops. Loading one runs its static SYMMFLOW_LIBRARY
// blocks, which register its ops (`symmflow run --load libmyops.so`).
#pragma once
#include <string>

namespace symmflow {

// dlopen(path, RTLD_NOW | RTLD_GLOBAL). An Error quoting dlerror() when the library
// can't be loaded, or carrying the message of a registration that failed in it.
void load_library(const std::string& path);

}  // namespace symmflow
