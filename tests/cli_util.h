// Runs the symmflow CLI as a user does (stdout and stderr together) for the
// tests of tests/: one helper instead of one popen loop per test file.
//
//   auto r = sf_test::run("run prog.sf --nproc 2 --check");
//   EXPECT_EQ(r.rc, 0) << r.out;
#pragma once
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace sf_test {

struct Result {
  int rc;           // exit code, or 128 + signal
  std::string out;  // stdout and stderr
};

// `env_prefix` goes before the binary (`env -u SYMMFLOW_DEBUG`, `SYMMFLOW_X=1`).
inline Result run(const std::string& args, const std::string& env_prefix = "") {
  std::string cmd = env_prefix + " " + std::string(SYMMFLOW_CLI) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  int st = pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), out};
}

}  // namespace sf_test
