// Programs racy in eager (tests/race/*.sf) are refused before any rank starts:
// `symmflow run` and `symmflow compile` exit 2 with the message each file
// states on its `# expect:` line ({file} stands for its path), naming both ops
// and both file:line:col (passes/race_check.h).
#include <gtest/gtest.h>

#include "cli_util.h"
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

using sf_test::Result;
using sf_test::run;

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// The `# expect:` line of a file, {file} replaced by its path.
std::string expected_message(const fs::path& p) {
  std::ifstream f(p);
  const std::string tag = "# expect: ";
  for (std::string line; std::getline(f, line);)
    if (line.rfind(tag, 0) == 0) {
      std::string m = line.substr(tag.size());
      for (size_t at; (at = m.find("{file}")) != std::string::npos;) m.replace(at, 6, p.string());
      return m;
    }
  return "";
}

std::vector<fs::path> racy_programs() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(fs::path(SF_SOURCE_DIR) / "tests/race"))
    if (e.path().extension() == ".sf") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(RaceCli, RunAndCompileRefuseEveryRacyProgram) {
  const auto files = racy_programs();
  ASSERT_GE(files.size(), 4u);
  for (const auto& f : files) {
    SCOPED_TRACE(f.string());
    const std::string want = expected_message(f);
    ASSERT_FALSE(want.empty()) << "no `# expect:` line";
    Result r = run("run " + f.string() + " --nproc 2");
    EXPECT_EQ(r.rc, 2) << r.out;
    // Once: the launcher refused the program, no rank ran (each would say it again).
    EXPECT_EQ(count(r.out, want), 1u) << "expected once:\n" << want << "\ngot:\n" << r.out;
    r = run("run " + f.string() + " --nproc 2 --mode eager");
    EXPECT_EQ(r.rc, 2) << r.out;
    r = run("compile " + f.string() + " --world 2");
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_NE(r.out.find(want), std::string::npos) << "expected:\n" << want << "\ngot:\n" << r.out;
  }
}

}  // namespace
