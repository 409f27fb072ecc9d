// rank_count(): the one rank limit of the command line (commands.h).
#include <CLI/CLI.hpp>

#include "symmflow/core/params.h"
#include "symmflow/tools/commands.h"

namespace symmflow::tools {

CLI::Validator rank_count(int lo) { return CLI::Range(lo, params::kMaxRanks); }

}  // namespace symmflow::tools
