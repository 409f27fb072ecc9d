// `symmflow env`, the SYMMFLOW_* registry against docs/runtime.md, and
// SYMMFLOW_DEBUG=INFO as a user sees them (core/params.h, core/log.h).
#include <gtest/gtest.h>

#include "cli_util.h"
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "symmflow/core/params.h"

namespace {

namespace fs = std::filesystem;

using sf_test::Result;
using sf_test::run;

// Every test starts from an environment without SYMMFLOW_* settings.
const char* kClean =
    "env -u SYMMFLOW_DEBUG -u SYMMFLOW_TIMEOUT -u SYMMFLOW_BACKEND -u SYMMFLOW_CHECK_HEAP "
    "-u SYMMFLOW_SYMM_HEAP_BYTES -u SYMMFLOW_RANK -u SYMMFLOW_WORLD_SIZE";

TEST(EnvCli, ListsEveryDeclaredVariable) {
  Result r = run("env", std::string(kClean) + " SYMMFLOW_TIMEOUT=42");
  ASSERT_EQ(r.rc, 0) << r.out;
  for (const auto& s : symmflow::params::specs())
    EXPECT_NE(r.out.find(s.name), std::string::npos) << s.name << " missing in\n" << r.out;
  std::regex timeout_row(R"(SYMMFLOW_TIMEOUT +\| 42 +\| environment +\| deadline)");
  EXPECT_TRUE(std::regex_search(r.out, timeout_row)) << r.out;
  std::regex heap_row(R"(SYMMFLOW_SYMM_HEAP_BYTES +\| 1G +\| default +\| )");
  EXPECT_TRUE(std::regex_search(r.out, heap_row)) << r.out;

  Result j = run("env --json", std::string(kClean) + " SYMMFLOW_RANK=1");
  ASSERT_EQ(j.rc, 0) << j.out;
  auto list = nlohmann::json::parse(j.out);
  ASSERT_EQ(list.size(), symmflow::params::specs().size());
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& e : list) by_name[e["name"]] = e;
  EXPECT_EQ(by_name["SYMMFLOW_RANK"]["source"], "launcher");
  EXPECT_EQ(by_name["SYMMFLOW_RANK"]["value"], "1");
  EXPECT_EQ(by_name["SYMMFLOW_TIMEOUT"]["source"], "default");
  EXPECT_EQ(by_name["SYMMFLOW_TIMEOUT"]["accepts"], "seconds > 0 (e.g. 30, 0.5)");
}

TEST(EnvCli, ABadValueExitsTwoNamingTheVariable) {
  Result r = run("env", std::string(kClean) + " SYMMFLOW_TIMEOUT=abc");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("SYMMFLOW_TIMEOUT: expected seconds > 0 (e.g. 30, 0.5), found 'abc'"),
            std::string::npos) << r.out;
  r = run("env --json", std::string(kClean) + " SYMMFLOW_BACKEND=nccl");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("SYMMFLOW_BACKEND: expected shm or mpi, found 'nccl'"), std::string::npos) << r.out;
  // A typo is warned about, not fatal.
  r = run("env", std::string(kClean) + " SYMMFLOW_TIMEOUTS=3");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("SYMMFLOW_TIMEOUTS is set but symmflow does not read it"), std::string::npos) << r.out;
}

// docs/runtime.md's "Environment variables" table: | `NAME` | `default` | set by | meaning |
TEST(EnvDocs, RuntimeMdTableMatchesTheRegistry) {
  std::ifstream f(std::string(SF_SOURCE_DIR) + "/docs/runtime.md");
  ASSERT_TRUE(f) << "docs/runtime.md";
  std::string line;
  bool in_section = false;
  std::map<std::string, std::string> documented;  // name -> default
  std::map<std::string, std::string> set_by;
  auto cell = [](std::string s) {
    size_t a = s.find_first_not_of(" `"), b = s.find_last_not_of(" `");
    return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
  };
  while (std::getline(f, line)) {
    if (line.rfind("## ", 0) == 0) in_section = line == "## Environment variables";
    if (!in_section || line.rfind("| `SYMMFLOW_", 0) != 0) continue;
    std::vector<std::string> cells;
    std::stringstream ss(line.substr(1));
    for (std::string c; std::getline(ss, c, '|');) cells.push_back(cell(c));
    ASSERT_GE(cells.size(), 4u) << line;
    EXPECT_TRUE(documented.emplace(cells[0], cells[1]).second) << cells[0] << " listed twice";
    set_by[cells[0]] = cells[2];
  }
  std::set<std::string> missing, extra;
  for (const auto& s : symmflow::params::specs()) {
    auto it = documented.find(s.name);
    if (it == documented.end()) {
      missing.insert(s.name);
      continue;
    }
    EXPECT_EQ(it->second, s.dflt) << s.name << ": docs/runtime.md says default '" << it->second
                                  << "', core/params.cc declares '" << s.dflt << "'";
    EXPECT_EQ(set_by[s.name], s.set_by == symmflow::params::SetBy::launcher ? "launcher" : "user")
        << s.name;
  }
  for (const auto& [name, d] : documented)
    if (!extra.count(name)) {
      bool declared = false;
      for (const auto& s : symmflow::params::specs()) declared |= name == s.name;
      if (!declared) extra.insert(name);
    }
  auto join = [](const std::set<std::string>& s) {
    std::string r;
    for (const auto& x : s) r += " " + x;
    return r;
  };
  EXPECT_TRUE(missing.empty()) << "declared in core/params.cc but not in docs/runtime.md's table:"
                               << join(missing);
  EXPECT_TRUE(extra.empty()) << "in docs/runtime.md's table but not declared in core/params.cc:"
                             << join(extra);
}

// Only core/params.cc reads the environment in src/ (tests aside). The three
// collectives files are being edited by another change; they move to params
// with it (see core/params.h), then the allowance goes.
TEST(EnvDocs, OnlyTheRegistryCallsGetenv) {
  fs::path root = fs::path(SF_SOURCE_DIR) / "src/symmflow";
  std::vector<std::string> offenders;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    const std::string p = e.path().string();
    if (!e.is_regular_file() || p.ends_with("_test.cc") || !(p.ends_with(".cc") || p.ends_with(".h")))
      continue;
    std::string rel = fs::relative(e.path(), root).string();
    if (rel == "core/params.cc") continue;
    std::ifstream f(e.path());
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (std::regex_search(text, std::regex(R"((std::)?\bgetenv\s*\()"))) offenders.push_back(rel);
  }
  std::string all;
  for (const auto& o : offenders) all += " " + o;
  EXPECT_TRUE(offenders.empty()) << "getenv outside core/params.cc (use params:: or params::system_env):" << all;
}

fs::path write_program() {
  fs::path d = fs::temp_directory_path() / ("sf-env-cli-" + std::to_string(getpid()));
  fs::create_directories(d);
  std::ofstream(d / "ar.sf") << "graph @f(%x: f32[1024]) -> (f32[1024]) {\n"
                                "  %y = aten::mul(%x, 2.0)\n"
                                "  c10d::all_reduce_(%y, \"sum\", \"world\")\n"
                                "  return %y\n}\n";
  return d / "ar.sf";
}

TEST(DebugLog, InfoLogsBackendAndTopologyPerRank) {
  fs::path prog = write_program();
  Result r = run("run " + prog.string() + " --nproc 2", std::string(kClean) + " SYMMFLOW_DEBUG=INFO");
  ASSERT_EQ(r.rc, 0) << r.out;
  for (int rank : {0, 1}) {
    std::string pre = "[symmflow rank " + std::to_string(rank) + "] INFO ";
    EXPECT_NE(r.out.find(pre + "backend shm (default): world size 2, rank " + std::to_string(rank)),
              std::string::npos) << r.out;
    EXPECT_NE(r.out.find(pre + "topology: 1 node, 2 ranks per node on this one; node 0: ranks 0-1"),
              std::string::npos) << r.out;
    EXPECT_NE(r.out.find(pre + "symmetric heap: "), std::string::npos) << r.out;
  }
  // Off by default: not one line more.
  Result quiet = run("run " + prog.string() + " --nproc 2", kClean);
  ASSERT_EQ(quiet.rc, 0) << quiet.out;
  EXPECT_EQ(quiet.out.find("[symmflow "), std::string::npos) << quiet.out;
  // A bad level is an error naming the variable.
  Result bad = run("run " + prog.string() + " --nproc 2", std::string(kClean) + " SYMMFLOW_DEBUG=LOUD");
  EXPECT_NE(bad.rc, 0) << bad.out;
  EXPECT_NE(bad.out.find("SYMMFLOW_DEBUG: expected WARN or INFO, found 'LOUD'"), std::string::npos) << bad.out;
  fs::remove_all(prog.parent_path());
}

}  // namespace
