#include "symmflow/runtime/debug_log.h"

#include <mutex>
#include <set>
#include <string>
#include <tuple>

#include "symmflow/core/params.h"
#include "symmflow/runtime/process_group.h"

namespace symmflow::dist::detail {

namespace {

}  // namespace

void log_algorithm_slow(const ProcessGroup& g, std::string_view collective, DType dt, int64_t numel,
                        std::string_view algo) {
  // Keyed by the group's name, not its address: a group made later at the same
  // address is another group (names are unique while a group lives).
  using Key = std::tuple<std::string, std::string, int, int64_t, std::string>;
  static std::mutex mu;
  static std::set<Key> seen;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!seen.emplace(g.name(), std::string(collective), int(dt), numel, std::string(algo)).second)
      return;
  }
  logging::write_line(logging::Level::info,
                      fmt::format("{} {}[{}] ({}) in group '{}' ({} rank{}): {}", collective,
                                  dtype_name(dt), numel, params::format_bytes(numel * int64_t(element_size(dt))),
                                  g.name(), g.size(), g.size() == 1 ? "" : "s", algo));
}

}  // namespace symmflow::dist::detail
