#include "symmflow/runtime/shm/shm_backend.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "symmflow/core/error.h"
#include "symmflow/core/params.h"
#include "symmflow/runtime/net/net_link.h"

namespace symmflow::dist {

using runtime::ControlBlock;
using runtime::RankState;

namespace {

const char* kHowToLaunch =
    "ranks are started by `symmflow launch --nproc N -- PROGRAM` (or runtime::launch_fn in tests), "
    "or by mpirun (the mpi backend, docs/multi-node.md)";

static_assert(params::kMaxRanks == runtime::kMaxRanks, "params.cc declares the rank range");

std::string env_string(const char* name) {
  SF_CHECK(params::is_set(name), "dist::init: environment variable {} is not set; {}", name,
           kHowToLaunch);
  return params::text(name);
}

// The registry checks the declared range [0 or 1, kMaxRanks]; this one the
// range of this job (a rank below the world size).
int env_int(const char* name, int lo, int hi) {
  SF_CHECK(params::is_set(name), "dist::init: environment variable {} is not set; {}", name,
           kHowToLaunch);
  int64_t v = params::integer(name);
  SF_CHECK(v >= lo && v <= hi, "dist::init: {} must be an integer in [{}, {}], found \"{}\"", name,
           lo, hi, params::raw(name));
  return int(v);
}

}  // namespace

LaunchEnv read_launch_env() {
  LaunchEnv e;
  e.world_size = env_int("SYMMFLOW_WORLD_SIZE", 1, runtime::kMaxRanks);
  e.rank = env_int("SYMMFLOW_RANK", 0, e.world_size - 1);
  e.local_world_size = params::is_set("SYMMFLOW_LOCAL_WORLD_SIZE")
                           ? env_int("SYMMFLOW_LOCAL_WORLD_SIZE", 1, runtime::kMaxRanks)
                           : e.world_size;
  e.local_rank = params::is_set("SYMMFLOW_LOCAL_RANK")
                     ? env_int("SYMMFLOW_LOCAL_RANK", 0, e.local_world_size - 1)
                     : e.rank;
  e.rendezvous = env_string("SYMMFLOW_RENDEZVOUS");
  e.token = params::raw("SYMMFLOW_JOB_TOKEN");
  return e;
}

std::unique_ptr<ShmBackend> ShmBackend::attach(const LaunchEnv& env) {
  SF_CHECK(!runtime::job_id_of(env.rendezvous).empty(),
           "dist::init: SYMMFLOW_RENDEZVOUS should look like /sf-<16 hex>-ctl-<32 hex>, found "
           "\"{}\"", env.rendezvous);
  std::unique_ptr<ShmBackend> b(new ShmBackend());
  b->ctl_ = runtime::ShmSegment::open(env.rendezvous);
  SF_CHECK(b->ctl_.size() >= sizeof(ControlBlock),
           "dist::init: rendezvous segment {} has {} bytes, expected a control block of {}",
           env.rendezvous, b->ctl_.size(), sizeof(ControlBlock));
  auto* cb = static_cast<ControlBlock*>(b->ctl_.data());
  SF_CHECK(cb->magic == runtime::kControlMagic && cb->version == runtime::kControlVersion,
           "dist::init: {} is not a symmflow control block (version {} expected)", env.rendezvous,
           runtime::kControlVersion);
  // The token check comes before anything is written: a refused process leaves
  // no trace in the job.
  SF_CHECK(env.token.size() == 32 && std::strncmp(env.token.c_str(), cb->token, 32) == 0,
           "dist::init: refused to attach to job {}: SYMMFLOW_JOB_TOKEN {} the job's token "
           "(a process may join only the job that launched it)",
           cb->job_id, env.token.empty() ? "is missing, expected" : "does not match");
  SF_CHECK(cb->world_size == env.world_size,
           "dist::init: SYMMFLOW_WORLD_SIZE is {} but job {} was launched with {} ranks",
           env.world_size, cb->job_id, cb->world_size);
  uint32_t absent = uint32_t(RankState::absent);
  if (!cb->state[env.rank].compare_exchange_strong(absent, uint32_t(RankState::attached))) {
    fail("dist::init: rank {} of job {} is already attached (pid {}); each rank attaches once",
         env.rank, cb->job_id, cb->pid[env.rank].load());
  }
  cb->pid[env.rank].store(int32_t(getpid()), std::memory_order_release);
  b->cb_ = cb;
  b->rank_ = env.rank;
  b->size_ = env.world_size;
  b->job_id_ = cb->job_id;
  b->deadlock_ = std::make_unique<runtime::DeadlockDetector>(cb, env.rank);
  // Hygiene: once every rank has the control block mapped, its name can go.
  if (cb->attached.fetch_add(1) + 1 == uint32_t(env.world_size)) b->ctl_.unlink();
  return b;
}

ShmBackend::~ShmBackend() { detach(); }

void ShmBackend::detach() {
  if (detached_ || !cb_) return;
  detached_ = true;
  cb_->state[rank_].store(uint32_t(RankState::detached), std::memory_order_release);
  runtime::notify_slow(cb_->barrier_wake);
}

std::string ShmBackend::peer_problem(int world_rank) const {
  if (runtime::job_aborted(cb_)) return "job aborted: " + runtime::abort_message(cb_);
  int lo = world_rank < 0 ? 0 : world_rank, hi = world_rank < 0 ? size_ : world_rank + 1;
  for (int r = lo; r < hi; ++r) {
    if (r == rank_) continue;
    std::string p = runtime::slot_problem(cb_, r, r);
    if (!p.empty()) return p;
  }
  return "";
}

std::unique_ptr<NetLink> ShmBackend::connect(const std::vector<int>&, std::string_view group_name) {
  fail("group '{}': the shm backend runs on one node and has no network link", group_name);
}

bool ShmBackend::record_failure(std::string_view message) {
  runtime::record_failure(cb_, rank_, message);
  return true;
}

void ShmBackend::abort(std::string_view reason) { runtime::abort_job(cb_, rank_, std::string(reason)); }

void ShmBackend::bootstrap_barrier(std::string_view what) {
  // Central counter barrier: bootstrap is rare, simplicity wins over speed.
  uint32_t gen = cb_->barrier_generation.load(std::memory_order_acquire);
  if (cb_->barrier_count.fetch_add(1, std::memory_order_acq_rel) + 1 == uint32_t(size_)) {
    cb_->barrier_count.store(0, std::memory_order_relaxed);
    cb_->barrier_generation.store(gen + 1, std::memory_order_release);
    runtime::notify(cb_->barrier_wake);
    return;
  }
  struct Live : runtime::LivenessCheck {
    ShmBackend* b;
    void check(const runtime::WaitSite& site) override {
      std::string p = b->peer_problem(-1);
      runtime::throw_if_deadlock(p);
      if (!p.empty())
        throw PeerFailure(fmt::format("peer failure in {} {}: rank {} of the job: {}", site.op,
                                      site.what, site.rank, p));
    }
    // Every rank takes part in a bootstrap barrier: it depends on all of them.
    void still_blocked(const runtime::WaitSite& site, bool first, uint64_t epoch,
                       runtime::FnRef<std::string()> describe) override {
      std::vector<int> all(size_t(b->size_));
      for (int r = 0; r < b->size_; ++r) all[size_t(r)] = r;
      if (auto report = b->deadlock_->still_blocked(all, first, epoch, describe); !report.empty()) {
        b->abort(report);  // the first reason wins; check() throws it
        check(site);
        throw DeadlockError(report);
      }
    }
    void unblocked() override { b->deadlock_->withdraw(); }
  } live;
  live.b = this;
  runtime::WaitSite site{"bootstrap barrier", what, "world", rank_, -1};
  auto ready = [&] { return cb_->barrier_generation.load(std::memory_order_acquire) != gen; };
  if (ready()) return;
  runtime::wait_slow(ready, cb_->barrier_wake, site, &live, [&] {
    return fmt::format("{} of {} ranks arrived", cb_->barrier_count.load(), size_);
  });
}

std::vector<std::string> ShmBackend::all_gather_blob(std::string_view mine, std::string_view what) {
  SF_CHECK(mine.size() <= runtime::kBlobBytes, "all_gather_blob({}): {} bytes, at most {} allowed",
           what, mine.size(), runtime::kBlobBytes);
  std::memcpy(cb_->blob[rank_], mine.data(), mine.size());
  cb_->blob_len[rank_].store(uint32_t(mine.size()), std::memory_order_release);
  bootstrap_barrier(what);
  std::vector<std::string> all(size_);
  for (int r = 0; r < size_; ++r) all[r].assign(cb_->blob[r], cb_->blob_len[r].load());
  bootstrap_barrier(what);  // nobody overwrites a slot before everyone has read it
  return all;
}

}  // namespace symmflow::dist
