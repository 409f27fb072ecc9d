#include "symmflow/exec/timeline.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>

namespace symmflow::exec {

std::string events_to_json(const std::vector<TraceEvent>& events) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& e : events) j.push_back({e.name, e.where, int(e.lane), e.start_us, e.dur_us});
  return j.dump();
}

std::vector<TraceEvent> events_from_json(const std::string& text) {
  std::vector<TraceEvent> out;
  for (const auto& e : nlohmann::json::parse(text))
    out.push_back({e[0].get<std::string>(), e[1].get<std::string>(), TraceEvent::Lane(e[2].get<int>()),
                   e[3].get<double>(), e[4].get<double>()});
  return out;
}

std::string chrome_trace_json(const std::vector<std::vector<TraceEvent>>& ranks) {
  double t0 = std::numeric_limits<double>::infinity();
  for (const auto& r : ranks)
    for (const auto& e : r) t0 = std::min(t0, e.start_us);
  nlohmann::json ev = nlohmann::json::array();
  for (size_t rank = 0; rank < ranks.size(); ++rank) {
    auto meta = [&](const char* what, int tid, std::string name) {
      nlohmann::json m = {{"ph", "M"}, {"name", what}, {"pid", rank}, {"args", {{"name", name}}}};
      if (tid >= 0) m["tid"] = tid;
      ev.push_back(m);
    };
    meta("process_name", -1, "rank " + std::to_string(rank));
    meta("thread_name", 0, "compute");
    meta("thread_name", 1, "communication");
    for (const auto& e : ranks[rank])
      ev.push_back({{"ph", "X"}, {"name", e.name}, {"cat", e.lane == TraceEvent::comm ? "comm" : "compute"},
                    {"pid", rank}, {"tid", int(e.lane)}, {"ts", e.start_us - t0}, {"dur", e.dur_us},
                    {"args", {{"at", e.where}}}});
  }
  return nlohmann::json{{"displayTimeUnit", "ms"}, {"traceEvents", ev}}.dump() + "\n";
}

}  // namespace symmflow::exec
