// IR golden tests (tests/ir/<pass>/*.sf), MLIR style: each file is an input graph,
// the steps to run, and the graph expected after them, in comments:
//
//   # passes: functionalize dce          (names of pipeline steps, or "pipeline"; also
//                                         schedule.no_overlap, schedule.max_in_flight_1)
//   # world: 2  rank: 1                  (optional; default world 1, rank 0)
//   graph @f(...) -> (...) { ... }
//   # expect:
//   # graph @f(...) -> (...) {
//   #   ...
//   # }
//
// `# expect: unchanged` says the passes must not transform the input. After every
// step the verifier runs, and the interpreter runs the graph before and after on
// the same inputs (world 1 only): the results must be bitwise equal.
// SF_UPDATE_GOLDEN=1 rewrites the expectations (review the diff!).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "symmflow/core/params.h"
#include "symmflow/exec/input_fill.h"
#include "symmflow/exec/program_runner.h"
#include "symmflow/exec/interpreter.h"
#include "symmflow/ir/parser.h"
#include "symmflow/ir/printer.h"
#include "symmflow/ir/verifier.h"
#include "symmflow/passes/collective_lowering.h"
#include "symmflow/passes/cse.h"
#include "symmflow/passes/memory_plan.h"
#include "symmflow/passes/symm_placement.h"
#include "symmflow/passes/dce.h"
#include "symmflow/passes/functionalize.h"
#include "symmflow/passes/pipeline.h"
#include "symmflow/passes/reinplace.h"
#include "symmflow/runtime/launcher.h"
#include "symmflow/runtime/world.h"

namespace symmflow::passes {
namespace {

namespace fs = std::filesystem;

struct Golden {
  std::string text;  // the whole file
  std::vector<std::string> passes;
  int world = 1, rank = 0;
  std::string expected;  // "" when the file has no expectation yet
  bool unchanged = false;
  bool types = false;  // "# print: types": expected IR with types, placement and plan
};

Golden read_golden(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  Golden g;
  g.text = ss.str();
  std::istringstream lines(g.text);
  std::string line;
  bool in_expect = false;
  std::smatch m;
  while (std::getline(lines, line)) {
    if (in_expect) {
      if (line.rfind("# ", 0) == 0) g.expected += line.substr(2) + "\n";
      else if (line == "#") g.expected += "\n";
      continue;
    }
    if (std::regex_search(line, m, std::regex(R"(^# passes:\s*(.*)$)"))) {
      std::istringstream ps(m[1].str());
      for (std::string s; ps >> s;) g.passes.push_back(s);
    }
    if (std::regex_search(line, m, std::regex(R"(^#.*\bworld:\s*(\d+))"))) g.world = std::stoi(m[1]);
    if (std::regex_search(line, m, std::regex(R"(^#.*\brank:\s*(\d+))"))) g.rank = std::stoi(m[1]);
    if (line == "# expect: unchanged") g.unchanged = true;
    if (line == "# print: types") g.types = true;
    if (line == "# expect:") in_expect = true;
  }
  return g;
}

void run_step(ir::Graph& g, const std::string& name) {
  if (name == "pipeline") return optimize(g, {});
  std::unique_ptr<Pass> p;
  if (name == "functionalize") p = std::make_unique<Functionalize>();
  else if (name == "dce") p = std::make_unique<DeadCodeElimination>();
  else if (name == "cse") p = std::make_unique<CommonSubexpressionElimination>();
  else if (name == "reinplace") p = std::make_unique<Reinplace>();
  else if (name == "symm_placement") p = std::make_unique<SymmPlacement>();
  else if (name == "collective_lowering") p = std::make_unique<CollectiveLowering>();
  else if (name == "memory_plan") p = std::make_unique<MemoryPlanning>();
  else if (name == "schedule") p = std::make_unique<Schedule>();
  else if (name == "schedule.no_overlap") p = std::make_unique<Schedule>(ScheduleOptions{.overlap = false});
  else if (name == "schedule.max_in_flight_1") p = std::make_unique<Schedule>(ScheduleOptions{.max_in_flight = 1});
  else FAIL() << "unknown pass " << name;
  p->run(g);
  ir::verify(g, name);
}

// Bitwise: the interpreter on the input graph and on the transformed one.
void check_same_results(const ir::Graph& before, const ir::Graph& after) {
  int rc = runtime::launch_fn(1, [&] {
    dist::init();
    auto inputs = [&](const ir::Graph& g) {
      std::vector<IValue> in;
      for (size_t k = 0; k < g.inputs().size(); ++k) {
        Tensor t = Tensor::empty(g.inputs()[k]->type().sizes, g.inputs()[k]->type().dtype);
        exec::fill_input(t, 0, int(k), 0);
        in.emplace_back(t);
      }
      return in;
    };
    auto in_a = inputs(before), in_b = inputs(after);
    auto out_a = exec::run_eager(before, in_a), out_b = exec::run_eager(after, in_b);
    for (size_t i = 0; i < out_a.size(); ++i)
      if (!exec::first_bitwise_difference(out_a[i], out_b[i]).empty()) return 10 + int(i);
    for (size_t k = 0; k < in_a.size(); ++k)
      if (!exec::first_bitwise_difference(in_a[k].to_tensor(), in_b[k].to_tensor()).empty()) return 50 + int(k);
    return 0;
  });
  EXPECT_EQ(rc, 0) << "the transformed graph computes something else (10+i: output i, 50+k: input k)";
}

TEST(Golden, EveryCase) {
  const fs::path root = SF_IR_TESTS_DIR;
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.path().extension() == ".sf") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 10u) << "golden cases missing under " << root;
  const bool update = std::getenv("SF_UPDATE_GOLDEN") != nullptr;
  // Algorithm choices follow the built-in thresholds, whatever this machine's
  // `symmflow tune` stored.
  setenv("SYMMFLOW_TUNE_FILE", "/nonexistent/symmflow-tune.json", 1);
  params::reload();  // the registry caches what it read: re-read the environment
  for (const auto& file : files) {
    SCOPED_TRACE(file.string());
    Golden gc = read_golden(file);
    ASSERT_FALSE(gc.passes.empty()) << "no '# passes:' line";
    auto g = ir::parse_graph(gc.text, {file.string(), gc.rank, gc.world});
    auto original = g->clone();
    std::string input_text = ir::print_graph(*g);
    for (const auto& p : gc.passes) run_step(*g, p);
    std::string got = ir::print_graph(*g, {.types = gc.types});
    if (gc.types)
      for (const auto& d : g->plan().decisions) got += fmt::format("# placement {} for {}: {}\n", d.value, d.op, d.reason);
    if (gc.unchanged) {
      EXPECT_EQ(got, input_text) << "must not transform";
    } else if (update) {
      std::string text = gc.text.substr(0, gc.text.find("# expect:\n"));
      std::ofstream f(file);
      f << text << "# expect:\n";
      std::istringstream ls(got);
      for (std::string l; std::getline(ls, l);) f << (l.empty() ? "#" : "# " + l) << "\n";
    } else {
      EXPECT_EQ(got, gc.expected);
    }
    // The printed result parses back to the same graph.
    EXPECT_EQ(ir::print_graph(*ir::parse_graph(got, {file.string(), gc.rank, gc.world})), ir::print_graph(*g));
    if (gc.world == 1) check_same_results(*original, *g);
  }
}

}  // namespace
}  // namespace symmflow::passes
