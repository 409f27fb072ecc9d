// For tests: sets (or unsets, value nullptr) an environment variable for one
// scope and makes the registry (params.h) re-read it, then restores both.
//
//   params::testing::EnvGuard g("SYMMFLOW_TIMEOUT", "0.5");
#pragma once
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "symmflow/core/params.h"

namespace symmflow::params::testing {

class EnvGuard {
 public:
  EnvGuard(const char* name, const char* value) : name_(name) {
    // The value of this moment, through the registry (the one reader of the
    // environment): declared SYMMFLOW_* names, or others' (HOME).
    reload();
    if (std::string_view(name).starts_with("SYMMFLOW_")) {
      if (is_set(name)) old_ = raw(name);
    } else {
      old_ = system_env(name);
    }
    if (value) setenv(name, value, 1);
    else unsetenv(name);
    reload();
  }
  ~EnvGuard() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
    reload();
  }
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace symmflow::params::testing
