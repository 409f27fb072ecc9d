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
// `# expect: unchanged` says the passes must not transform the input: each must
// also report changed == false. Otherwise a pass that changed the printed graph
// must report changed == true, and some pass must have changed something. After
// every step the verifier runs, and the interpreter runs the graph before and
// after on the same inputs (world 1 only): the results must be bitwise equal.
// Each file is its own test case (Golden/EveryFile.Case/<dir>_<name>).
// SF_UPDATE_GOLDEN=1 rewrites the expectations (review the diff!).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>

#include "symmflow/core/params.h"
#include "symmflow/exec/input_fill.h"
#include "symmflow/exec/bitwise_diff.h"
#include "symmflow/exec/interpreter.h"
#include "symmflow/ir/parser.h"
#include "symmflow/ir/printer.h"
#include "symmflow/ir/verifier.h"
#include "symmflow/passes/pipeline.h"
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

// Runs one step; returns the pass's `changed` (nullopt for "pipeline", which
// reports none). `schedule.no_overlap` and `schedule.max_in_flight_1` are the
// schedule pass with those options.
std::optional<bool> run_step(ir::Graph& g, const std::string& name) {
  if (name == "pipeline") {
    optimize(g, {});
    return std::nullopt;
  }
  PipelineOptions opts;
  std::string pass = name;
  if (name == "schedule.no_overlap") opts.schedule.overlap = false;
  if (name == "schedule.max_in_flight_1") opts.schedule.max_in_flight = 1;
  if (name.rfind("schedule.", 0) == 0) pass = "schedule";
  const bool changed = make_pass(pass, opts)->run(g);
  ir::verify(g, name);
  return changed;
}

// Bitwise: the interpreter on the input graph and on the transformed one.
void check_same_results(const ir::Graph& before, const ir::Graph& after) {
  int rc = runtime::launch_fn(1, [&] {
    dist::init();
    auto in_a = exec::seeded_inputs(before, 0, 0), in_b = exec::seeded_inputs(after, 0, 0);
    auto out_a = exec::run_eager(before, in_a), out_b = exec::run_eager(after, in_b);
    for (size_t i = 0; i < out_a.size(); ++i)
      if (!exec::first_bitwise_difference(out_a[i], out_b[i]).empty()) return 10 + int(i);
    for (size_t k = 0; k < in_a.size(); ++k)
      if (!exec::first_bitwise_difference(in_a[k].to_tensor(), in_b[k].to_tensor()).empty()) return 50 + int(k);
    return 0;
  });
  EXPECT_EQ(rc, 0) << "the transformed graph computes something else (10+i: output i, 50+k: input k)";
}

std::vector<std::string> golden_files() {
  std::vector<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(SF_IR_TESTS_DIR))
    if (e.path().extension() == ".sf") files.push_back(fs::relative(e.path(), SF_IR_TESTS_DIR).string());
  std::sort(files.begin(), files.end());
  return files;
}

std::string case_name(const testing::TestParamInfo<std::string>& info) {
  std::string n = info.param.substr(0, info.param.size() - 3);  // without ".sf"
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

TEST(Golden, CasesExist) { EXPECT_GE(golden_files().size(), 10u) << "golden cases missing under " << SF_IR_TESTS_DIR; }

class GoldenFile : public testing::TestWithParam<std::string> {};

TEST_P(GoldenFile, Case) {
  const fs::path file = fs::path(SF_IR_TESTS_DIR) / GetParam();
  const bool update = std::getenv("SF_UPDATE_GOLDEN") != nullptr;
  // Algorithm choices follow the built-in thresholds, whatever this machine's
  // `symmflow tune` stored.
  setenv("SYMMFLOW_TUNE_FILE", "/nonexistent/symmflow-tune.json", 1);
  params::reload();  // the registry caches what it read: re-read the environment
  {
    Golden gc = read_golden(file);
    ASSERT_FALSE(gc.passes.empty()) << "no '# passes:' line";
    auto g = ir::parse_graph(gc.text, {file.string(), gc.rank, gc.world});
    auto original = g->clone();
    std::string input_text = ir::print_graph(*g);
    bool any_changed = false;
    for (const auto& p : gc.passes) {
      const std::string before = ir::print_graph(*g, {.types = true});
      const std::optional<bool> changed = run_step(*g, p);
      if (!changed) {
        any_changed = true;  // the whole pipeline: judged by the text alone
        continue;
      }
      any_changed |= *changed;
      if (gc.unchanged) {
        EXPECT_FALSE(*changed) << p << " reports a change on a must-not-transform case";
      }
      if (ir::print_graph(*g, {.types = true}) != before) {
        EXPECT_TRUE(*changed) << p << " changed the graph but reports changed == false";
      }
    }
    if (!gc.unchanged) {
      EXPECT_TRUE(any_changed) << "a transform case where no pass reports a change";
    }
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

INSTANTIATE_TEST_SUITE_P(EveryFile, GoldenFile, testing::ValuesIn(golden_files()), case_name);

}  // namespace
}  // namespace symmflow::passes
