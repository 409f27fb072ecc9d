#include "symmflow/runtime/world.h"

#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>

#include "symmflow/core/error.h"
#include "symmflow/runtime/net/mpi_backend.h"
#include "symmflow/runtime/shm/shm_backend.h"
#include "symmflow/runtime/shm/wait.h"

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

// Online CPUs, not this process's affinity mask: a launcher that pins rank r
// to CPU r leaves each rank one CPU, yet the ranks do not share cores.
int usable_cpus() { return int(sysconf(_SC_NPROCESSORS_ONLN)); }

// SYMMFLOW_BACKEND=shm|mpi, else mpi when an MPI launcher started us (and not
// `symmflow launch`, which sets SYMMFLOW_RENDEZVOUS), else shm.
std::string choose_backend() {
  if (const char* b = std::getenv("SYMMFLOW_BACKEND"); b && *b) {
    std::string s = b;
    SF_CHECK(s == "shm" || s == "mpi", "SYMMFLOW_BACKEND: expected shm or mpi, found \"{}\"", s);
    return s;
  }
  if (launched_by_mpi() && !std::getenv("SYMMFLOW_RENDEZVOUS")) return "mpi";
  return "shm";
}

}  // namespace

size_t parse_bytes(const std::string& text, const char* what) {
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  size_t mult = 1;
  if (end && *end) {
    switch (*end) {
      case 'k': case 'K': mult = size_t(1) << 10; break;
      case 'm': case 'M': mult = size_t(1) << 20; break;
      case 'g': case 'G': mult = size_t(1) << 30; break;
      default: mult = 0;
    }
    if (mult && end[1] != '\0' && !(end[1] == 'B' && end[2] == '\0') &&
        !(end[1] == 'i' && end[2] == 'B' && end[3] == '\0'))
      mult = 0;
  }
  SF_CHECK(errno == 0 && end != text.c_str() && mult != 0 && v > 0,
           "{}: expected a positive size like 4096, 64M or 1G, found \"{}\"", what, text);
  return size_t(v) * mult;
}

void init(const InitOptions& options) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_world) return;
  auto w = std::make_unique<WorldState>();
  if (options.heap_bytes) {
    w->heap_bytes = *options.heap_bytes;
  } else if (const char* s = std::getenv("SYMMFLOW_SYMM_HEAP_BYTES"); s && *s) {
    w->heap_bytes = parse_bytes(s, "SYMMFLOW_SYMM_HEAP_BYTES");
  } else {
    w->heap_bytes = size_t(1) << 30;  // tmpfs commits only the pages that are touched
  }
  if (options.check_heap) {
    w->check_heap = *options.check_heap;
  } else if (const char* s = std::getenv("SYMMFLOW_CHECK_HEAP")) {
    w->check_heap = std::string(s) == "1";
  }
  if (choose_backend() == "mpi") {
    w->backend = make_mpi_backend();
    // Ranks on this host (simulated nodes share it): OpenMPI says how many.
    int local = 0;
    for (int r = 0; r < w->backend->size(); ++r)
      local += w->backend->node_of(r) == w->backend->node_of(w->backend->rank());
    if (const char* v = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE"); v && std::atoi(v) > 0)
      local = std::atoi(v);
    runtime::set_oversubscribed(local > usable_cpus());
  } else {
    SF_CHECK(!std::getenv("SYMMFLOW_RANKS_PER_NODE"), "SYMMFLOW_RANKS_PER_NODE simulates nodes "
             "of the mpi backend; the shm backend runs one node (start the ranks with mpirun, or "
             "unset it)");
    LaunchEnv env = read_launch_env();
    runtime::set_oversubscribed(env.local_world_size > usable_cpus());
    w->backend = ShmBackend::attach(env);
  }
  // Ranks started on one machine by separate launchers (network namespaces
  // as hosts) cannot see each other: SYMMFLOW_OVERSUBSCRIBED=1|0 says it.
  if (const char* o = std::getenv("SYMMFLOW_OVERSUBSCRIBED"); o && *o) {
    SF_CHECK(std::string(o) == "0" || std::string(o) == "1",
             "SYMMFLOW_OVERSUBSCRIBED: expected 0 or 1, found \"{}\"", o);
    runtime::set_oversubscribed(std::string(o) == "1");
  }
  std::vector<int> all(size_t(w->backend->size()));
  for (int r = 0; r < w->backend->size(); ++r) all[size_t(r)] = r;
  auto world = ProcessGroup::create(*w->backend, "world", all, w->heap_bytes, w->check_heap);
  w->by_name["world"] = world.get();
  w->groups.push_back(std::move(world));
  g_world = w.release();
  static bool registered = false;
  if (!registered) {
    registered = true;
    std::atexit([] {
      try {
        shutdown();
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
  w->backend->detach();
  w->by_name.clear();
  while (!w->groups.empty()) w->groups.pop_back();
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
  SF_CHECK(it != w.by_name.end(), "dist::group: no group named '{}' on rank {}", name,
           w.backend->rank());
  return *it->second;
}

Backend& backend() { return *state("backend").backend; }

void set_timeout(double seconds) {
  SF_CHECK(seconds > 0, "dist::set_timeout: expected a positive number of seconds, found {}",
           seconds);
  runtime::set_wait_timeout_s(seconds);
}

double timeout() { return runtime::wait_timeout_s(); }

}  // namespace symmflow::dist
