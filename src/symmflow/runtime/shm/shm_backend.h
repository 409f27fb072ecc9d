// ShmBackend: the default backend. Every rank is on this node; bootstrap and
// liveness go through the job's control block (see control_block.h), data
// through shared-memory segments that every rank maps.
#pragma once
#include <memory>
#include <string>

#include "symmflow/runtime/backend.h"
#include "symmflow/runtime/shm/control_block.h"
#include "symmflow/runtime/shm/segment.h"

namespace symmflow::dist {

// What the launcher put in the environment.
struct LaunchEnv {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  std::string rendezvous;  // control block segment name
  std::string token;       // 32 hex chars
};
// Reads and validates SYMMFLOW_*; a missing or malformed variable is an Error
// that names it and says how ranks are normally started.
LaunchEnv read_launch_env();

class ShmBackend final : public Backend {
 public:
  // Opens the control block, checks magic, world size and job token, claims the
  // rank's slot and records its pid. The last rank to attach unlinks the
  // control block's name.
  static std::unique_ptr<ShmBackend> attach(const LaunchEnv& env);
  ~ShmBackend() override;

  std::string_view name() const override { return "shm"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int node_of(int) const override { return 0; }
  int num_nodes() const override { return 1; }
  std::unique_ptr<NetLink> connect(const std::vector<int>& world_ranks,
                                   std::string_view group_name) override;
  void bootstrap_barrier(std::string_view what) override;
  std::vector<std::string> all_gather_blob(std::string_view mine, std::string_view what) override;
  size_t max_blob_bytes() const override { return runtime::kBlobBytes; }
  const std::string& job_id() const override { return job_id_; }
  std::string peer_problem(int world_rank) const override;
  void abort(std::string_view reason) override;

  void detach() override;
  runtime::DeadlockDetector* deadlock_detector() override { return deadlock_.get(); }
  bool record_failure(std::string_view message) override;
  runtime::ControlBlock* control() const { return cb_; }

 private:
  ShmBackend() = default;
  runtime::ShmSegment ctl_;
  runtime::ControlBlock* cb_ = nullptr;
  int rank_ = 0, size_ = 1;
  std::string job_id_;
  bool detached_ = false;
  std::unique_ptr<runtime::DeadlockDetector> deadlock_;
};

}  // namespace symmflow::dist
