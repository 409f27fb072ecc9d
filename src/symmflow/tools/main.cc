// The `symmflow` command line (DESIGN.md §5). Exit codes: 0 success, 1 run-time
// failure, 2 usage or parse error.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <string>

#include "symmflow/core/error.h"
#include "symmflow/git_describe.h"  // generated at build time (cmake/git_describe.cmake)
#include "symmflow/runtime/world.h"
#include "symmflow/tools/commands.h"
#include "symmflow/version.h"       // generated from project(VERSION ...) (cmake/version.h.in)

namespace {

// "symmflow 0.1.0 (git 2755beb-dirty)"; the git part only in a git checkout.
std::string version_text() {
  std::string v = "symmflow " SYMMFLOW_VERSION;
  if (std::string(SYMMFLOW_GIT_DESCRIBE).size()) v += " (git " SYMMFLOW_GIT_DESCRIBE ")";
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"symmflow: a compiler and runtime for distributed tensor programs with "
               "in-place collectives, point-to-point and symmetric memory"};
  app.set_version_flag("--version", version_text(), "Print the version (and the git commit it was built from)");
  app.footer(
      "Use from another project (README.md, \"Install\"): `cmake --install build/dev --prefix P` installs the "
      "headers, libsymmflow, this command and the CMake package; then find_package(symmflow) with "
      "CMAKE_PREFIX_PATH=P gives the target symmflow::symmflow, or `pkg-config --cflags --libs symmflow` with "
      "PKG_CONFIG_PATH=P/lib/pkgconfig gives the flags. Run the program with `symmflow launch --nproc N -- ./prog`.");
  app.require_subcommand(1);
  symmflow::tools::add_ops_command(app);
  symmflow::tools::add_launch_command(app);
  symmflow::tools::add_bench_command(app);
  symmflow::tools::add_run_command(app);
  symmflow::tools::add_compile_command(app);
  symmflow::tools::add_tune_command(app);
  symmflow::tools::add_env_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();  // a subcommand's own status
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  } catch (const std::exception& e) {  // symmflow::Error and anything else: a message, exit 1
    if (!symmflow::dist::report_failure(e.what())) fmt::print(stderr, "symmflow: error: {}\n", e.what());
    return 1;
  }
  return 0;
}
