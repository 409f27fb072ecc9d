// `symmflow env [--json]`: every declared SYMMFLOW_* variable (core/params.h),
// its value, where the value comes from and what it does. Every variable set
// is checked: a bad value prints its error and exits 2.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "symmflow/core/params.h"
#include "symmflow/tools/commands.h"

namespace symmflow::tools {
namespace {

struct EnvOptions {
  bool json = false;
  bool all_columns = false;
};

int run_env(const EnvOptions& o) {
  params::reload();
  const auto entries = params::all();
  const auto unknown = params::undeclared_in_environment();
  int bad = 0;
  for (const auto& e : entries) bad += !e.error.empty();
  if (o.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& e : entries) {
      const params::Spec& s = *e.spec;
      nlohmann::json j = {{"name", s.name},
                          {"value", e.value},
                          {"source", params::source_name(e.source)},
                          {"default", s.dflt},
                          {"kind", params::kind_name(s.kind)},
                          {"accepts", params::accepts(s)},
                          {"set_by", s.set_by == params::SetBy::launcher ? "launcher" : "user"},
                          {"doc", s.doc}};
      if (!e.error.empty()) j["error"] = e.error;
      out.push_back(j);
    }
    fmt::print("{}\n", out.dump(2));
  } else {
    size_t wn = 8, wv = 5;
    for (const auto& e : entries) {
      wn = std::max(wn, std::string_view(e.spec->name).size());
      wv = std::max(wv, e.value.size());
    }
    wv = std::min<size_t>(wv, 40);
    fmt::print("{:<{}} | {:<{}} | {:<11} | {}\n", "variable", wn, "value", wv, "source", "doc");
    fmt::print("{:-<{}}-+-{:-<{}}-+-{:-<11}-+-{:-<40}\n", "", wn, "", wv, "", "");
    for (const auto& e : entries) {
      std::string doc = e.spec->doc;
      if (o.all_columns)
        doc += fmt::format(" [{}; accepts {}; set by {}]", params::kind_name(e.spec->kind),
                           params::accepts(*e.spec),
                           e.spec->set_by == params::SetBy::launcher ? "launcher" : "user");
      fmt::print("{:<{}} | {:<{}} | {:<11} | {}\n", e.spec->name, wn, e.value, wv,
                 params::source_name(e.source), doc);
    }
  }
  for (const auto& n : unknown)
    fmt::print(stderr, "symmflow env: warning: {} is set but symmflow does not read it (a typo?)\n", n);
  for (const auto& e : entries)
    if (!e.error.empty()) fmt::print(stderr, "symmflow env: error: {}\n", e.error);
  return bad ? 2 : 0;
}

}  // namespace

void add_env_command(CLI::App& app) {
  auto opts = std::make_shared<EnvOptions>();
  auto* cmd = app.add_subcommand(
      "env",
      "List every SYMMFLOW_* environment variable symmflow reads: its value, where the value "
      "comes from (default, environment, launcher) and what it does. Every variable that is "
      "set is checked; a bad value is printed and the exit status is 2. SYMMFLOW_* variables "
      "that are set but unknown are warned about (stderr)");
  cmd->add_flag("--json", opts->json,
                "Print a JSON list (name, value, source, default, kind, accepts, set_by, doc, "
                "and error for a bad value)");
  cmd->add_flag("--long", opts->all_columns, "Add each variable's kind, accepted values and who sets it");
  cmd->callback([opts] { throw CLI::RuntimeError(run_env(*opts)); });
}

}  // namespace symmflow::tools
