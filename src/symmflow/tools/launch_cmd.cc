// `symmflow launch --nproc N -- CMD ARGS...`: starts N ranks of CMD with the
// rendezvous environment, supervises them, exits with the first failure.
#include <CLI/CLI.hpp>

#include "symmflow/runtime/launcher.h"
#include "symmflow/tools/commands.h"

namespace symmflow::tools {

void add_launch_command(CLI::App& app) {
  auto opts = std::make_shared<runtime::LaunchOptions>();
  auto no_prefix = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand(
      "launch",
      "Start N rank processes of a command on this machine, supervise them, and exit with the "
      "first failing rank's status (128+signal for a signal); the error each failed rank "
      "reports is printed once per distinct message (\"symmflow: all N ranks: ...\")");
  cmd->add_option("--nproc,-n", opts->nproc, "Number of ranks")->required()->check(rank_count());
  cmd->add_flag("--no-prefix", *no_prefix, "Do not prefix output lines with [rank R]");
  cmd->add_flag("--pin", opts->pin, "Pin rank r to CPU r (when ranks <= CPUs)");
  cmd->add_option("--timeout", opts->timeout_s, "Kill the job after SEC seconds (exit 124); 0 = no limit");
  cmd->add_option("cmd", opts->argv, "The command and its arguments, after --")->required();
  cmd->callback([opts, no_prefix] {
    opts->prefix_output = !*no_prefix;
    throw CLI::RuntimeError(runtime::launch(*opts));
  });
}

}  // namespace symmflow::tools
