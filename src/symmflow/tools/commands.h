// The subcommands of `symmflow`, each in its own file; main.cc wires them to CLI11.
#pragma once
#include <string>
#include <vector>

namespace CLI { class App; class Validator; }

namespace symmflow::tools {

// The range every rank count on the command line is checked against (--nproc
// of run, launch, bench and tune; compile's --world): [lo, params::kMaxRanks],
// the ranks a job's control block holds. One limit, so no command accepts a
// world that another one, or the runtime, refuses.
CLI::Validator rank_count(int lo = 1);

// `symmflow ops [NAMESPACE] [--json]`: every registered op, its schema, its
// kernels and its symmetric-memory args.
void add_ops_command(CLI::App& app);
// `symmflow launch --nproc N [--no-prefix] [--pin] [--timeout S] -- CMD ARGS...`
void add_launch_command(CLI::App& app);
// `symmflow bench collectives [--nproc N] [--sizes S] [--json F] [--plot F.svg] ...`
void add_bench_command(CLI::App& app);
// `symmflow run FILE.sf [--nproc N] [--check] [--mode eager|compiled|both] ...`
void add_run_command(CLI::App& app);
// `symmflow compile FILE.sf --world N [--rank R] [--dump-ir DIR|-] [--explain] [--dot F]`
void add_compile_command(CLI::App& app);
// `symmflow tune [--nproc 2 3 4] [--sizes 256-256K] [--out FILE]`
void add_tune_command(CLI::App& app);
// `symmflow env [--json] [--long]`: every SYMMFLOW_* variable, its value, source and doc.
void add_env_command(CLI::App& app);

}  // namespace symmflow::tools
