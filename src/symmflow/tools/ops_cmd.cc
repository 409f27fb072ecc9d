// `symmflow ops [NAMESPACE]`: the operator registry as a user reads it.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "symmflow/library/dispatcher.h"
#include "symmflow/library/symm_mem_args.h"
#include "symmflow/tools/commands.h"

namespace symmflow::tools {
namespace {

struct OpsOptions {
  std::string ns;
  bool json = false;
};

int run_ops(const OpsOptions& o) {
  auto ops = Dispatcher::instance().all_operators();
  nlohmann::json out = nlohmann::json::array();
  int shown = 0;
  for (Operator* op : ops) {
    if (!op->is_defined()) continue;
    const FunctionSchema& s = op->schema();
    if (!o.ns.empty() && s.ns != o.ns) continue;
    std::vector<std::string> keys;
    if (op->has_kernel(DispatchKey::CPU)) keys.push_back("CPU");
    if (op->has_kernel(DispatchKey::Meta)) keys.push_back("Meta");
    auto symm = symm_mem_args(*op);
    if (o.json) {
      out.push_back({{"name", op->full_name()}, {"schema", s.to_string()}, {"kernels", keys},
                     {"symm_mem_args", symm}, {"mutation_resolver", op->has_mutation_resolver()}});
    } else {
      fmt::print("{}\n    kernels: {}", s.to_string(), keys.empty() ? "none" : fmt::format("{}", fmt::join(keys, ", ")));
      if (!symm.empty()) fmt::print("   symmetric: {}", fmt::join(symm, ", "));
      if (op->has_mutation_resolver()) fmt::print("   mutation: resolved per call");
      fmt::print("\n");
    }
    ++shown;
  }
  if (o.json) fmt::print("{}\n", out.dump(2));
  if (shown == 0) {
    fmt::print(stderr, "symmflow ops: no operators in namespace '{}'\n", o.ns);
    return 2;
  }
  return 0;
}

}  // namespace

void add_ops_command(CLI::App& app) {
  auto opts = std::make_shared<OpsOptions>();
  auto* cmd = app.add_subcommand(
      "ops", "List every registered op with its schema, its kernels and its symmetric-memory args");
  cmd->add_option("namespace", opts->ns, "Only this namespace (aten, c10d, symm_mem, ...)");
  cmd->add_flag("--json", opts->json, "Print a JSON list instead of text");
  cmd->callback([opts] { throw CLI::RuntimeError(run_ops(*opts)); });
}

}  // namespace symmflow::tools
