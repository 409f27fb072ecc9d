// SYMMFLOW_DEBUG=INFO lines of the runtime (core/log.h): dist::init() logs the
// backend and topology itself; collectives report the algorithm they chose
// with log_algorithm_once(), e.g.
//   [symmflow rank 0] INFO all_reduce f32[1024] (4K) in group 'world' (2 ranks): two_shot
// once per (group, collective, dtype, numel, algorithm) and process.
// Off (the default), a call is one load and one predicted-not-taken branch.
#pragma once
#include <cstdint>
#include <string_view>

#include "symmflow/core/dtype.h"
#include "symmflow/core/log.h"

namespace symmflow::dist {

class ProcessGroup;

namespace detail {
void log_algorithm_slow(const ProcessGroup& g, std::string_view collective, DType dt, int64_t numel,
                        std::string_view algo);
}  // namespace detail

inline void log_algorithm_once(const ProcessGroup& g, std::string_view collective, DType dt,
                               int64_t numel, std::string_view algo) {
  if (logging::info_enabled()) [[unlikely]]
    detail::log_algorithm_slow(g, collective, dt, numel, algo);
}

}  // namespace symmflow::dist
