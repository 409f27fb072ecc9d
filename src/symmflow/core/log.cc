#include "symmflow/core/log.h"

#include <unistd.h>

#include <cerrno>
#include <string>

#include "symmflow/core/params.h"

namespace symmflow::logging {

namespace detail {
std::atomic<int> g_level{-1};

int read_level() {
  int l = 0;
  if (params::is_set("SYMMFLOW_DEBUG")) {
    std::string w = params::word("SYMMFLOW_DEBUG");  // a bad value throws here, every time
    l = int(w == "INFO" ? Level::info : Level::warn);
  }
  g_level.store(l, std::memory_order_relaxed);
  return l;
}
}  // namespace detail

namespace {
std::atomic<int> g_rank{-1};
}

void set_rank(int rank) { g_rank.store(rank, std::memory_order_relaxed); }

std::string format_line(Level lvl, std::string_view msg) {
  const int r = g_rank.load(std::memory_order_relaxed);
  std::string who = r >= 0 ? fmt::format("rank {}", r) : fmt::format("pid {}", ::getpid());
  return fmt::format("[symmflow {}] {} {}", who, lvl == Level::info ? "INFO" : "WARN", msg);
}

void write_line(Level lvl, std::string_view msg) {
  std::string line = format_line(lvl, msg);
  line += '\n';
  const char* p = line.data();
  size_t n = line.size();
  while (n > 0) {  // one write for a line below PIPE_BUF; the loop only for longer ones
    ssize_t k = ::write(STDERR_FILENO, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return;
    p += k;
    n -= size_t(k);
  }
}

void reload() {
  detail::g_level.store(-1, std::memory_order_relaxed);
}

}  // namespace symmflow::logging
