// --dump-ir and --dot for `symmflow compile` and `symmflow run`:
// what the compiler did, pass by pass, in the text IR.
#pragma once
#include <functional>
#include <string>
#include <string_view>

#include "symmflow/ir/graph.h"
#include "symmflow/passes/pipeline.h"
#include "symmflow/passes/symm_placement.h"

namespace CLI { class App; }

namespace symmflow::tools {

// A dump hook: to stdout when dest is "-", else one file per step in dest
// (`03-cse.sf`), created if missing. Each dump is the step's graph with types.
std::function<void(std::string_view, const ir::Graph&)> make_ir_dumper(const std::string& dest);

// Graphviz: one box per node, an edge per value from producer to user.
std::string to_dot(const ir::Graph& g);

// --no-overlap, --max-in-flight and --verify, shared by run and compile.
struct ScheduleFlags {
  bool no_overlap = false;
  int max_in_flight = passes::ScheduleOptions{}.max_in_flight;
  bool verify = false;
};
void add_schedule_options(CLI::App* cmd, ScheduleFlags* f);
void apply_schedule_flags(const ScheduleFlags& f, passes::PipelineOptions* p);

// --no-placement and --symmetric-hint OP:ARG, shared by run and compile.
void add_placement_options(CLI::App* cmd, bool* no_placement, std::vector<std::string>* hints);
passes::PlacementOptions placement_options(bool no_placement, const std::vector<std::string>& hints);

}  // namespace symmflow::tools
