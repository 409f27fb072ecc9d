// The process-wide distributed state: dist::init() attaches this process to the
// job the launcher started (environment variables, see docs/runtime.md) and
// creates the group "world"; dist::shutdown() leaves (also run at exit).
//
//   int main() {
//     symmflow::dist::init();
//     auto& w = symmflow::dist::world();
//     ... w.rank(), w.size(), w.barrier() ...
//   }
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "symmflow/runtime/backend.h"
#include "symmflow/runtime/process_group.h"

namespace symmflow::dist {

struct InitOptions {
  std::optional<size_t> heap_bytes;  // per rank; default SYMMFLOW_SYMM_HEAP_BYTES or 1 GiB
  std::optional<bool> check_heap;    // default SYMMFLOW_CHECK_HEAP=1
};

// Picks the backend (SYMMFLOW_BACKEND, else mpi when mpirun started the
// process, else shm), attaches and creates "world". Collective. The shm
// backend reads SYMMFLOW_RANK, SYMMFLOW_WORLD_SIZE, SYMMFLOW_RENDEZVOUS and
// SYMMFLOW_JOB_TOKEN (set by `symmflow launch`); the mpi backend asks MPI.
// A missing/invalid variable or a wrong token is an Error saying which.
// Calling it again while initialized does nothing.
void init(const InitOptions& options = {});
bool is_initialized();
// Leaves the job: peers that still wait for this rank fail with PeerFailure.
// Symmetric tensors still alive stay valid (the mapping lives until they die).
void shutdown();

ProcessGroup& world();
// Collective over every world rank, in the same order everywhere: creates a
// group of `world_ranks` named `name` (its own heap and signal pad). Returns
// nullptr on ranks that are not members.
ProcessGroup* new_group(const std::vector<int>& world_ranks, const std::string& name);
// The group called `name` ("world" included); an Error if there is none.
ProcessGroup& group(const std::string& name);
Backend& backend();

// Every world rank's text, indexed by world rank, through the backend's
// bootstrap exchange (chunks of max_blob_bytes()) rather than a collective: a
// world collective would become the group's first, and move its one-time setup
// sync — which also drives P2P a peer may be waiting on — away from where the
// program's first collective is (a generated program with P2P in flight across
// a symm_mem all_reduce hung that way). `what` names the exchange in errors.
std::vector<std::string> all_gather_text(const std::string& mine, std::string_view what);

// The error this rank ends with, for `symmflow launch` to print once for every
// rank that ends with the same one ("symmflow: all 4 ranks: <message>")
// rather than once per rank. Returns false when nothing collects it (not
// initialized, or not started by `symmflow launch`): print it yourself.
bool report_failure(std::string_view message);

// The deadline of every wait, in seconds (default: SYMMFLOW_TIMEOUT or 300).
void set_timeout(double seconds);
double timeout();

}  // namespace symmflow::dist
