// The `symmflow` command line (DESIGN.md §5). Exit codes: 0 success, 1 run-time
// failure, 2 usage or parse error.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "symmflow/core/error.h"
#include "symmflow/runtime/world.h"
#include "symmflow/tools/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"symmflow: a compiler and runtime for distributed tensor programs with "
               "in-place collectives, point-to-point and symmetric memory"};
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
