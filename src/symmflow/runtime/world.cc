#include "symmflow/runtime/world.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>

#include "symmflow/core/error.h"
#include "symmflow/core/log.h"
#include "symmflow/core/params.h"
#include "symmflow/runtime/net/mpi_backend.h"
#include "symmflow/runtime/progress.h"
#include "symmflow/runtime/shm/shm_backend.h"
#include "symmflow/runtime/shm/wait.h"
#include "symmflow/runtime/shm/wait_policy.h"
#include "symmflow/runtime/sim_link.h"
#include "symmflow/runtime/uncaught.h"

namespace symmflow::dist {

namespace {

struct WorldState {
  std::unique_ptr<Backend> backend;
  // Groups in creation order; destroyed before the backend.
  std::vector<std::unique_ptr<ProcessGroup>> groups;
  std::map<std::string, ProcessGroup*> by_name;
  size_t heap_bytes = 0;
  bool check_heap = false;
};

std::mutex g_mu;
WorldState* g_world = nullptr;

WorldState& state(const char* op) {
  SF_CHECK(g_world != nullptr, "dist::{}: the runtime is not initialized (call dist::init() first)",
           op);
  return *g_world;
}


// SYMMFLOW_BACKEND=shm|mpi, else mpi when an MPI launcher started us (and not
// `symmflow launch`, which sets SYMMFLOW_RENDEZVOUS), else shm.
std::string choose_backend() {
  if (params::is_set("SYMMFLOW_BACKEND")) return params::word("SYMMFLOW_BACKEND");
  if (launched_by_mpi() && !params::is_set("SYMMFLOW_RENDEZVOUS")) return "mpi";
  return "shm";
}

std::string format_size(size_t b) {
  for (auto [shift, unit] : {std::pair{30, "GiB"}, std::pair{20, "MiB"}, std::pair{10, "KiB"}})
    if (b >= (size_t(1) << shift) && b % (size_t(1) << shift) == 0)
      return fmt::format("{} {}", b >> shift, unit);
  return fmt::format("{} bytes", b);
}

// "0-3" or "0,2,5".
std::string rank_list(const std::vector<int>& ranks) {
  bool consecutive = true;
  for (size_t i = 1; i < ranks.size(); ++i) consecutive &= ranks[i] == ranks[i - 1] + 1;
  if (consecutive && ranks.size() > 1) return fmt::format("{}-{}", ranks.front(), ranks.back());
  std::string s;
  for (size_t i = 0; i < ranks.size(); ++i) s += (i ? "," : "") + std::to_string(ranks[i]);
  return s;
}

// SYMMFLOW_DEBUG=INFO: what this rank runs on (NCCL_DEBUG=INFO's init lines).
void log_init(const WorldState& w, ProcessGroup& world, std::string_view chosen_by) {
  logging::set_rank(world.rank());
  if (!logging::info_enabled()) return;
  const Backend& b = *w.backend;
  int local = 0, local_size = 0;
  for (int r : world.node_ranks(world.node())) {
    if (r == world.rank()) local = local_size;
    ++local_size;
  }
  logging::info("backend {} ({}): world size {}, rank {}, node {} of {}, local rank {} of {}, "
                "job {}", b.name(), chosen_by, world.size(), world.rank(), world.node(),
                world.num_nodes(), local, local_size, b.job_id());
  std::string nodes;
  for (int n = 0; n < world.num_nodes(); ++n)
    nodes += fmt::format("{}node {}: ranks {}", n ? "; " : "", n, rank_list(world.node_ranks(n)));
  logging::info("topology: {} node{}, {} rank{} per node on this one; {}", world.num_nodes(),
                world.num_nodes() == 1 ? "" : "s", local_size, local_size == 1 ? "" : "s", nodes);
  const runtime::WaitPolicy wp = runtime::wait_policy();
  logging::info("symmetric heap: {} per rank and group{}; wait timeout {} s; oversubscribed {} "
                "(waits spin {} us, yield {} us, then sleep)",
                format_size(w.heap_bytes), w.check_heap ? " (checked)" : "",
                runtime::wait_timeout_s(), wp.oversubscribed ? "yes" : "no", wp.spin_us, wp.yield_us);
}

}  // namespace

void init(const InitOptions& options) {
  detail::install_uncaught_handler();  // first: what follows may throw
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_world) return;
  // Each attach sees the environment of this moment (a test may setenv before
  // it), and every SYMMFLOW_* value set is checked here, before anything else.
  params::reload();
  logging::reload();
  params::validate_all();
  detail::load_sim_link();
  auto w = std::make_unique<WorldState>();
  // Default 1 GiB: tmpfs commits only the pages that are touched.
  w->heap_bytes = options.heap_bytes ? *options.heap_bytes : params::bytes("SYMMFLOW_SYMM_HEAP_BYTES");
  w->check_heap = options.check_heap ? *options.check_heap : params::flag("SYMMFLOW_CHECK_HEAP");
  const std::string backend = choose_backend();
  const char* chosen_by = params::is_set("SYMMFLOW_BACKEND") ? "SYMMFLOW_BACKEND"
                          : backend == "mpi"                 ? "started by an MPI launcher"
                                                             : "default";
  if (backend == "mpi") {
    w->backend = make_mpi_backend();
    // Ranks on this host (simulated nodes share it): OpenMPI says how many.
    int local = 0;
    for (int r = 0; r < w->backend->size(); ++r)
      local += w->backend->node_of(r) == w->backend->node_of(w->backend->rank());
    if (auto v = params::system_env("OMPI_COMM_WORLD_LOCAL_SIZE"); v && std::atoi(v->c_str()) > 0)
      local = std::atoi(v->c_str());
    runtime::set_wait_policy(runtime::choose_wait_policy(local));
  } else {
    SF_CHECK(!params::is_set("SYMMFLOW_RANKS_PER_NODE"), "SYMMFLOW_RANKS_PER_NODE simulates nodes "
             "of the mpi backend; the shm backend runs one node (start the ranks with mpirun, or "
             "unset it)");
    LaunchEnv env = read_launch_env();
    runtime::set_wait_policy(runtime::choose_wait_policy(env.local_world_size));
    w->backend = ShmBackend::attach(env);
  }
  std::vector<int> all(size_t(w->backend->size()));
  for (int r = 0; r < w->backend->size(); ++r) all[size_t(r)] = r;
  auto world = ProcessGroup::create(*w->backend, "world", all, w->heap_bytes, w->check_heap);
  w->by_name["world"] = world.get();
  log_init(*w, *world, chosen_by);
  w->groups.push_back(std::move(world));
  g_world = w.release();
  static bool registered = false;
  if (!registered) {
    registered = true;
    std::atexit([] {
      try {
        shutdown();
      } catch (const std::exception& e) {  // at exit: the message, and the process fails
        std::fprintf(stderr, "symmflow: %s\n", e.what());
        std::fflush(nullptr);
        _exit(1);
      } catch (...) {
      }
    });
  }
}

bool is_initialized() { return g_world != nullptr; }

void shutdown() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (!g_world) return;
  std::unique_ptr<WorldState> w(g_world);
  g_world = nullptr;
  // A send nobody received is a bug that an eager send would otherwise hide
  // (its Work completed). Not after a failure: that is reported already.
  std::string unmatched;
  if (!runtime::comm_failed() && w->backend->peer_problem(-1).rfind("job aborted", 0) != 0) {
    for (auto& g : w->groups) {
      std::string u = detail::p2p_unmatched(*g);
      if (!u.empty()) unmatched += fmt::format("{}group '{}': {}", unmatched.empty() ? "" : "; ", g->name(), u);
    }
  }
  w->backend->detach();
  w->by_name.clear();
  while (!w->groups.empty()) w->groups.pop_back();
  SF_CHECK(unmatched.empty(), "dist::shutdown: rank {} leaves with sends that no receive matched: {} "
           "(every isend needs an irecv from its rank with the same tag on the peer)",
           w->backend->rank(), unmatched);
}

ProcessGroup& world() { return *state("world").by_name.at("world"); }

ProcessGroup* new_group(const std::vector<int>& world_ranks, const std::string& name) {
  auto& w = state("new_group");
  SF_CHECK(!w.by_name.count(name), "dist::new_group: a group named '{}' already exists", name);
  auto g = ProcessGroup::create(*w.backend, name, world_ranks, w.heap_bytes, w.check_heap);
  if (!g) return nullptr;
  ProcessGroup* p = g.get();
  w.by_name[name] = p;
  w.groups.push_back(std::move(g));
  return p;
}

ProcessGroup& group(const std::string& name) {
  auto& w = state("group");
  auto it = w.by_name.find(name);
  SF_CHECK(it != w.by_name.end(), "dist::group: no group named '{}' (groups are made by "
           "dist::new_group on every rank; 'world' always exists)", name);
  return *it->second;
}

Backend& backend() { return *state("backend").backend; }

std::vector<std::string> all_gather_text(const std::string& mine, std::string_view what) {
  auto& b = backend();
  const size_t chunk = b.max_blob_bytes();
  const std::string sizes_what = std::string(what) + ": sizes";
  const auto sizes = b.all_gather_blob(std::to_string(mine.size()), sizes_what);
  size_t most = 0;
  for (const auto& n : sizes) most = std::max(most, size_t(std::stoull(n)));
  std::vector<std::string> out(sizes.size());
  for (size_t at = 0; at < most; at += chunk) {
    const auto part = b.all_gather_blob(at < mine.size() ? mine.substr(at, chunk) : std::string(), what);
    for (size_t r = 0; r < part.size(); ++r) out[r] += part[r];
  }
  return out;
}

bool report_failure(std::string_view message) {
  // try_lock: the uncaught-error handler may run while this thread holds it.
  std::unique_lock<std::mutex> lock(g_mu, std::try_to_lock);
  return lock.owns_lock() && g_world && g_world->backend->record_failure(message);
}

void set_timeout(double seconds) {
  SF_CHECK(seconds > 0, "dist::set_timeout: expected a positive number of seconds, found {}",
           seconds);
  runtime::set_wait_timeout_s(seconds);
}

double timeout() { return runtime::wait_timeout_s(); }

}  // namespace symmflow::dist
