// Errors: one exception type, `symmflow::Error`, whose message says what was
// expected, what was found and where. SF_CHECK(cond, fmt, args...) throws it.
#pragma once
#include <fmt/format.h>
#include <stdexcept>
#include <string>

namespace symmflow {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& msg) : std::runtime_error(msg) {}
};

// Raised when a wait passes its deadline (runtime) — callers may catch it apart.
class TimeoutError : public Error {
 public:
  using Error::Error;
};

// Raised when a peer rank died or left the job.
class PeerFailure : public Error {
 public:
  using Error::Error;
};

// Raised when every rank a wait depends on is blocked waiting and nothing in
// flight can move (runtime/shm/deadlock.h): the message names each rank's
// pending op.
class DeadlockError : public Error {
 public:
  using Error::Error;
};

template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> f, Args&&... args) {
  throw Error(fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace symmflow

#define SF_CHECK(cond, ...)                 \
  do {                                      \
    if (!(cond)) ::symmflow::fail(__VA_ARGS__); \
  } while (0)
