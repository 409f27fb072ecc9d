// Timeline: what a compiled run did and when, for `symmflow run --trace`
// (Chrome trace events, one process per rank, viewable in Perfetto). The
// compute lane holds every instruction the rank executed (waits included: the
// time it was blocked); the communication lane holds each asynchronous op from
// its start to the end of its wait — the window it was in flight.
#pragma once
#include <chrono>
#include <string>
#include <vector>

namespace symmflow::exec {

struct TraceEvent {
  enum Lane { compute = 0, comm = 1 };
  std::string name;   // "aten::mm %y"
  std::string where;  // "ring.sf:7" or ""
  Lane lane = compute;
  double start_us = 0, dur_us = 0;  // on the machine's monotonic clock (shared by the ranks)
};

struct Timeline {
  std::vector<TraceEvent> events;
  static double now_us() {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }
};

// One rank's events as JSON and back (ranks hand their timelines to rank 0 in files).
std::string events_to_json(const std::vector<TraceEvent>& events);
std::vector<TraceEvent> events_from_json(const std::string& text);

// {"traceEvents": [...]} for ranks' timelines (index = rank), times relative to
// the earliest event.
std::string chrome_trace_json(const std::vector<std::vector<TraceEvent>>& ranks);

}  // namespace symmflow::exec
