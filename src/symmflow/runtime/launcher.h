// Launcher: starts N rank processes on this node, supervises them, and cleans
// up after them whatever happened.
//
//   LaunchOptions o;
//   o.nproc = 4;
//   o.argv = {"./my_program", "--flag"};
//   int rc = launch(o);                   // 0, or the first failing rank's status
//
//   int rc = launch_fn(2, [] { dist::init(); ...; return 0; });   // tests: fork only
//
// Each rank gets SYMMFLOW_RANK, SYMMFLOW_WORLD_SIZE, SYMMFLOW_LOCAL_RANK,
// SYMMFLOW_LOCAL_WORLD_SIZE, SYMMFLOW_RENDEZVOUS (the name of the job's control
// block, unguessable) and SYMMFLOW_JOB_TOKEN (128 random bits, checked at attach).
// When a rank exits non-zero or is killed, the launcher raises the job's abort
// flag naming it (waiting ranks throw PeerFailure within ~0.1 s), waits
// `grace_s`, then SIGKILLs the stragglers. At the end it unlinks every
// shared-memory segment whose name carries the job's random prefix.
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace symmflow::runtime {

struct LaunchOptions {
  int nproc = 1;
  std::vector<std::string> argv;  // the program and its arguments (launch() only)
  bool prefix_output = true;      // "[rank R] " before every line of stdout/stderr
  double timeout_s = 0;           // whole-job limit; 0 = none. Exceeded: rc 124
  double grace_s = 3;             // after the first failure, before SIGKILL
  bool pin = false;               // pin rank r to CPU r when nproc <= online CPUs
  int out_fd = 1;                 // where the ranks' stdout goes (prefixed or not)
  int err_fd = 2;                 // where the ranks' stderr goes
  std::vector<std::pair<std::string, std::string>> env;  // extra variables for ranks
};

struct LaunchReport {
  std::string job_id;          // the "sf-<hex>" prefix of the job's segments
  std::vector<int> status;     // per rank: exit code, or 128+signal
  int first_failed_rank = -1;  // -1 when every rank exited 0
  std::string abort_reason;    // what the control block says, "" if not aborted
  int segments_unlinked = 0;   // leftovers removed at the end (0 in a clean run)
};

// fork+exec of opts.argv in N ranks. Returns 0 when every rank exited 0, else
// the first failing rank's status (exit code, or 128+signal), 124 on job timeout.
int launch(const LaunchOptions& opts, LaunchReport* report = nullptr);

// The same supervision without exec: each rank is a fork of the caller running
// body(); its return value is the exit code, an escaping exception prints
// "symmflow: rank R: <message>" on stderr and exits 1. dist::shutdown() runs
// after body. opts.argv is ignored.
int launch_fn(const LaunchOptions& opts, const std::function<int()>& body,
              LaunchReport* report = nullptr);
int launch_fn(int nproc, const std::function<int()>& body, LaunchReport* report = nullptr);

// Status code of a waitpid status: exit code, or 128+signal.
int status_code(int wait_status);

}  // namespace symmflow::runtime
