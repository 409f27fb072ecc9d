// The mpi backend (mpi_backend.h). Bootstrap is nonblocking MPI (Ibarrier,
// Iallgather) polled under the runtime's deadlines; liveness inside a node
// goes through a node-local control block in shared memory (pids and states,
// like the shm backend's), and a dead rank on another node is MPI's to report:
// mpirun tears the job down when a process dies.
#include "symmflow/runtime/net/mpi_backend.h"

#include <cstdlib>
#include <string>

#include "symmflow/core/error.h"
#include "symmflow/core/params.h"

#if SYMMFLOW_HAVE_MPI
#include <mpi.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "symmflow/runtime/shm/control_block.h"
#include "symmflow/runtime/net/mpi_link.h"
#include "symmflow/runtime/net/net_link.h"
#include "symmflow/runtime/shm/segment.h"
#include "symmflow/runtime/shm/wait.h"
#endif

namespace symmflow::dist {

bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"})
    if (auto s = params::system_env(v); s && !s->empty()) return true;
  return false;
}

#if !SYMMFLOW_HAVE_MPI

bool mpi_backend_available() { return false; }

std::unique_ptr<Backend> make_mpi_backend() {
  fail("dist::init: the mpi backend is not built: CMake did not find MPI when symmflow was "
       "configured (install libopenmpi-dev and openmpi-bin, then reconfigure), or start the "
       "ranks with `symmflow launch` to use the shm backend");
}

#else

bool mpi_backend_available() { return true; }

namespace {

using runtime::ControlBlock;
using runtime::RankState;

// Every MPI call goes through this: an error becomes an Error naming the call.
void check_mpi(int rc, const char* call, int rank) {
  if (rc == MPI_SUCCESS) return;
  runtime::note_comm_failure();
  fail("mpi backend: {} failed on world rank {}: {}", call, rank, mpi_error_string(rc));
}

int env_ranks_per_node() {
  // Declared as an integer in [1, kMaxRanks] (core/params.cc).
  return params::is_set("SYMMFLOW_RANKS_PER_NODE") ? int(params::integer("SYMMFLOW_RANKS_PER_NODE")) : 0;
}

class MpiBackend final : public Backend {
 public:
  MpiBackend() {
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) {
      int provided = 0;
      // FUNNELED: one thread drives the runtime.
      int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
      SF_CHECK(rc == MPI_SUCCESS, "dist::init: MPI_Init_thread failed (code {})", rc);
      own_mpi_ = true;
    }
    // Our own communicator: errors return codes instead of aborting, and the
    // application's traffic on MPI_COMM_WORLD never matches ours.
    MPI_Comm_dup(MPI_COMM_WORLD, &world_);
    MPI_Comm_set_errhandler(world_, MPI_ERRORS_RETURN);
    MPI_Comm_rank(world_, &rank_);
    MPI_Comm_size(world_, &size_);
    SF_CHECK(size_ <= runtime::kMaxRanks, "dist::init: {} MPI ranks, at most {} supported", size_,
             runtime::kMaxRanks);
    // mpirun answers a dead rank with SIGTERM to the others: segments still
    // being set up must not outlive them.
    runtime::unlink_created_segments_on_signals();
    find_nodes();
    make_job_id();
    attach_node_control();
  }

  ~MpiBackend() override {
    detach();
    if (!own_mpi_) return;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    if (runtime::comm_failed()) {
      // Peers may wait for us forever in MPI: end the whole job now.
      MPI_Abort(world_, 1);
    }
    MPI_Comm_free(&world_);
    MPI_Finalize();
  }

  std::string_view name() const override { return "mpi"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int node_of(int r) const override { return node_.at(size_t(r)); }
  int num_nodes() const override { return num_nodes_; }

  std::unique_ptr<NetLink> connect(const std::vector<int>& world_ranks,
                                   std::string_view group_name) override {
    int key = -1;
    for (size_t i = 0; i < world_ranks.size(); ++i)
      if (world_ranks[i] == rank_) key = int(i);
    MPI_Comm comm = MPI_COMM_NULL;
    // Ordered by the group rank (key), so the communicator's ranks are group ranks.
    check_mpi(MPI_Comm_split(world_, key >= 0 ? 0 : MPI_UNDEFINED, key, &comm), "MPI_Comm_split",
              rank_);
    if (comm == MPI_COMM_NULL) return nullptr;
    return make_mpi_link(&comm, std::string(group_name), rank_);
  }

  void bootstrap_barrier(std::string_view what) override {
    MPI_Request req;
    check_mpi(MPI_Ibarrier(world_, &req), "MPI_Ibarrier", rank_);
    wait_request(req, "bootstrap barrier", what);
  }

  std::vector<std::string> all_gather_blob(std::string_view mine, std::string_view what) override {
    SF_CHECK(mine.size() <= runtime::kBlobBytes, "all_gather_blob({}): {} bytes, at most {} allowed",
             what, mine.size(), runtime::kBlobBytes);
    constexpr size_t kSlot = runtime::kBlobBytes + 4;
    std::vector<char> out(kSlot * size_t(size_)), in(kSlot, 0);
    const uint32_t n = uint32_t(mine.size());
    std::memcpy(in.data(), &n, 4);
    std::memcpy(in.data() + 4, mine.data(), mine.size());
    MPI_Request req;
    check_mpi(MPI_Iallgather(in.data(), int(kSlot), MPI_BYTE, out.data(), int(kSlot), MPI_BYTE,
                             world_, &req),
              "MPI_Iallgather", rank_);
    wait_request(req, "bootstrap all_gather", what);
    std::vector<std::string> all(static_cast<size_t>(size_));
    for (int r = 0; r < size_; ++r) {
      uint32_t len = 0;
      std::memcpy(&len, out.data() + kSlot * size_t(r), 4);
      all[size_t(r)].assign(out.data() + kSlot * size_t(r) + 4, std::min<size_t>(len, kSlot - 4));
    }
    return all;
  }

  size_t max_blob_bytes() const override { return runtime::kBlobBytes; }
  const std::string& job_id() const override { return job_id_; }

  std::string peer_problem(int world_rank) const override {
    if (runtime::job_aborted(cb_)) return "job aborted: " + runtime::abort_message(cb_);
    int lo = world_rank < 0 ? 0 : world_rank, hi = world_rank < 0 ? size_ : world_rank + 1;
    for (int r = lo; r < hi; ++r) {
      if (r == rank_ || node_[size_t(r)] != node_[size_t(rank_)]) continue;  // remote: MPI's job
      std::string p = runtime::slot_problem(cb_, local_slot(r), r);
      if (!p.empty()) return p;
    }
    return "";
  }

  void abort(std::string_view reason) override {
    runtime::abort_job(cb_, rank_, std::string(reason));
    runtime::note_comm_failure();
  }

  void detach() override {
    if (detached_ || !cb_) return;
    detached_ = true;
    cb_->state[local_slot(rank_)].store(uint32_t(RankState::detached), std::memory_order_release);
    runtime::notify_slow(cb_->barrier_wake);
  }

 private:
  // Nodes: the shared-memory split, optionally cut into consecutive groups of
  // SYMMFLOW_RANKS_PER_NODE ranks (which must each lie on one real node).
  void find_nodes() {
    MPI_Comm shared;
    check_mpi(MPI_Comm_split_type(world_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &shared),
              "MPI_Comm_split_type", rank_);
    // The real node's id: its lowest world rank.
    int low = rank_;
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &low, 1, MPI_INT, MPI_MIN, shared), "MPI_Allreduce", rank_);
    MPI_Comm_free(&shared);
    std::vector<int> real(static_cast<size_t>(size_));
    check_mpi(MPI_Allgather(&low, 1, MPI_INT, real.data(), 1, MPI_INT, world_), "MPI_Allgather",
              rank_);
    std::vector<int> key = real;
    if (int k = env_ranks_per_node(); k > 0) {
      for (int r = 0; r < size_; ++r) {
        key[size_t(r)] = r / k;
        SF_CHECK(real[size_t(r)] == real[size_t(r / k * k)],
                 "SYMMFLOW_RANKS_PER_NODE={} puts ranks {} and {} on one node, but they run on "
                 "different hosts (they share no memory)", k, r / k * k, r);
      }
    }
    // Renumber nodes 0.. in the order of their lowest rank.
    node_.assign(size_t(size_), -1);
    std::vector<int> seen;
    for (int r = 0; r < size_; ++r) {
      auto it = std::find(seen.begin(), seen.end(), key[size_t(r)]);
      if (it == seen.end()) {
        seen.push_back(key[size_t(r)]);
        it = seen.end() - 1;
      }
      node_[size_t(r)] = int(it - seen.begin());
    }
    num_nodes_ = int(seen.size());
    for (int r = 0; r < size_; ++r)
      if (node_[size_t(r)] == node_[size_t(rank_)]) local_.push_back(r);
  }

  int local_slot(int world_rank) const {
    return int(std::find(local_.begin(), local_.end(), world_rank) - local_.begin());
  }

  void make_job_id() {
    char id[32] = {};
    if (rank_ == 0) std::snprintf(id, sizeof id, "%s", runtime::new_job_id().c_str());
    check_mpi(MPI_Bcast(id, sizeof id, MPI_CHAR, 0, world_), "MPI_Bcast", rank_);
    job_id_ = id;
  }

  // The node's first rank creates a control block for the node's ranks (pids,
  // states, abort flag); the others map it; its name goes once all have.
  void attach_node_control() {
    const bool first = local_[0] == rank_;
    std::string published;
    if (first) {
      ctl_ = runtime::ShmSegment::create(job_id_, "ctl", sizeof(ControlBlock));
      cb_ = static_cast<ControlBlock*>(ctl_.data());
      cb_->magic = runtime::kControlMagic;
      cb_->version = runtime::kControlVersion;
      cb_->world_size = int32_t(local_.size());
      std::snprintf(cb_->job_id, sizeof cb_->job_id, "%s", job_id_.c_str());
      published = ctl_.name();
    }
    auto names = all_gather_blob(published, "node control block");
    if (!first) {
      ctl_ = runtime::ShmSegment::open(names[size_t(local_[0])]);
      cb_ = static_cast<ControlBlock*>(ctl_.data());
      SF_CHECK(cb_->magic == runtime::kControlMagic && cb_->world_size == int32_t(local_.size()),
               "dist::init: node control block {} does not match this node's {} ranks",
               ctl_.name(), local_.size());
    }
    const int slot = local_slot(rank_);
    cb_->pid[slot].store(int32_t(getpid()), std::memory_order_release);
    cb_->state[slot].store(uint32_t(RankState::attached), std::memory_order_release);
    bootstrap_barrier("node control block");
    if (first) ctl_.unlink();
  }

  void wait_request(MPI_Request& req, const char* op, std::string_view what) {
    runtime::WaitSite site{op, what, "world", rank_, -1};
    int rc = MPI_SUCCESS;
    runtime::wait_poll(
        [&] {
          int flag = 0;
          rc = MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
          return flag != 0 || rc != MPI_SUCCESS;
        },
        site, nullptr, [&] { return std::string("the other ranks have not all arrived"); });
    check_mpi(rc, op, rank_);
  }

  bool own_mpi_ = false;
  MPI_Comm world_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1, num_nodes_ = 1;
  std::vector<int> node_;   // world rank -> node
  std::vector<int> local_;  // world ranks on my node
  std::string job_id_;
  runtime::ShmSegment ctl_;
  ControlBlock* cb_ = nullptr;
  bool detached_ = false;
};

}  // namespace

std::unique_ptr<Backend> make_mpi_backend() { return std::make_unique<MpiBackend>(); }

#endif

}  // namespace symmflow::dist
