// Backend: what a process group needs from the transport, kept small so that an
// `mpi` backend (bootstrap and inter-node transfer over MPI, shared memory inside
// a node) can slot in later without touching collectives. The `shm` backend
// (one node, no daemon) is the default.
//
// Collectives should not branch on the backend's name; they ask
// `is_shm_reachable(peer)` (equivalently: peer_ptr(peer) != nullptr) and use
// load/store through the symmetric heap and signal pad for those peers.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace symmflow::dist {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;  // "shm"
  virtual int rank() const = 0;               // this process's world rank
  virtual int size() const = 0;               // world size

  // True when `world_rank`'s symmetric heap is mapped in this process, so
  // peer_ptr() is non-null and loads/stores/signals reach it directly.
  virtual bool is_shm_reachable(int world_rank) const = 0;

  // Bootstrap, for setup only (slow path; every world rank takes part).
  virtual void bootstrap_barrier(std::string_view what) = 0;
  // Every rank contributes up to max_blob_bytes(); returns all, indexed by world rank.
  virtual std::vector<std::string> all_gather_blob(std::string_view mine, std::string_view what) = 0;
  virtual size_t max_blob_bytes() const = 0;
  // The per-job prefix of this job's shared-memory segment names ("sf-<hex>").
  virtual const std::string& job_id() const = 0;

  // Liveness: "" when the job runs and `world_rank` is alive (-1: every rank),
  // else what is wrong ("job aborted: rank 2 (pid 77) killed by signal 9").
  virtual std::string peer_problem(int world_rank) const = 0;
  // Marks the job failed so that every rank fails fast (the first reason wins).
  virtual void abort(std::string_view reason) = 0;
};

}  // namespace symmflow::dist
