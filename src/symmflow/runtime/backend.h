// Backend: what a process group needs from the transport. Two exist:
//  - `shm` (shm_backend.h), the default: one node, ranks started by
//    `symmflow launch`, no daemon;
//  - `mpi` (mpi_backend.h, built when OpenMPI is found): ranks started by
//    mpirun; MPI for bootstrap and between nodes, shared memory inside a node.
//
// Collectives do not branch on the backend's name: they ask the group for its
// topology (which ranks share my node: is_shm_reachable, peer_ptr != nullptr)
// and, for groups that span nodes, for its NetLink.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace symmflow::runtime {
class DeadlockDetector;
}

namespace symmflow::dist {

class NetLink;

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;  // "shm" | "mpi"
  virtual int rank() const = 0;               // this process's world rank
  virtual int size() const = 0;               // world size

  // The node `world_rank` runs on: 0..num_nodes()-1, numbered in the order of
  // their lowest rank. Ranks on one node share memory: their symmetric heaps
  // are mapped in each other's processes (ProcessGroup::is_shm_reachable).
  virtual int node_of(int world_rank) const = 0;
  virtual int num_nodes() const = 0;

  // Collective over every world rank (members or not), in the same order on all:
  // the message link between the members of a group that spans nodes. Returns
  // nullptr on non-members (and an Error from backends without one).
  virtual std::unique_ptr<NetLink> connect(const std::vector<int>& world_ranks,
                                           std::string_view group_name) = 0;

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
  // Marks this rank as cleanly gone (peers still waiting for it fail at once).
  virtual void detach() = 0;
  // Deadlock detection (runtime/shm/deadlock.h) where every rank the job's
  // waits depend on shares this node's control block; nullptr: none (mpi).
  virtual runtime::DeadlockDetector* deadlock_detector() { return nullptr; }
  // Hands the error this rank ends with to the launcher, which prints each
  // distinct message once; false when no launcher collects it (mpi).
  virtual bool record_failure(std::string_view message) { (void)message; return false; }
};

}  // namespace symmflow::dist
