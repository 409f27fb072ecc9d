// SYMMFLOW_DEBUG logging, as NCCL_DEBUG: unset (quiet), WARN or INFO. With
// INFO each rank writes lines like
//   [symmflow rank 1] INFO backend shm: world size 2, rank 1, local rank 1 of 2
// to stderr, one write(2) per line (lines of ranks sharing a pipe never mix).
//
//   if (logging::info_enabled()) logging::info("chose {} for {}", algo, what);
//
// info_enabled() is an inline relaxed load of a cached int and one
// predicted-not-taken branch: the cost when logging is off. The namespace is
// `logging`, not `log`: symmflow::log is the tensor function.
#pragma once
#include <fmt/format.h>

#include <atomic>
#include <string_view>

namespace symmflow::logging {

enum class Level : int { off = 0, warn = 1, info = 2 };

namespace detail {
extern std::atomic<int> g_level;  // a Level, or -1 before SYMMFLOW_DEBUG is read
int read_level();                 // reads and caches it; a bad value is an Error
}  // namespace detail

inline Level level() {
  int l = detail::g_level.load(std::memory_order_relaxed);
  if (__builtin_expect(l < 0, 0)) l = detail::read_level();
  return Level(l);
}
inline bool info_enabled() { return __builtin_expect(level() >= Level::info, 0); }
inline bool warn_enabled() { return __builtin_expect(level() >= Level::warn, 0); }

// The rank in the prefix ("[symmflow rank R]"); -1 (before dist::init): "[symmflow pid P]".
void set_rank(int rank);
// Writes "[symmflow rank R] INFO <msg>\n" (or WARN) to stderr in one write.
void write_line(Level lvl, std::string_view msg);
// The line as write_line() writes it (without the newline).
std::string format_line(Level lvl, std::string_view msg);

template <typename... Args>
void info(fmt::format_string<Args...> f, Args&&... args) {
  if (info_enabled()) write_line(Level::info, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void warn(fmt::format_string<Args...> f, Args&&... args) {
  if (warn_enabled()) write_line(Level::warn, fmt::format(f, std::forward<Args>(args)...));
}

// Reads SYMMFLOW_DEBUG again at the next use (after params::reload(): dist::init(), tests).
void reload();

}  // namespace symmflow::logging
