// The `mpi` backend: ranks started by mpirun (or any MPI launcher). MPI does the
// bootstrap and carries messages between nodes; ranks on one node (from
// MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)) share a node-local symmetric heap
// in shared memory, exactly as with the shm backend.
//
//   mpirun -np 4 ./prog                                # backend chosen automatically
//   mpirun -np 4 -x SYMMFLOW_RANKS_PER_NODE=2 ./prog   # 2 simulated nodes on one host
//
// Built only when CMake finds MPI (SYMMFLOW_HAVE_MPI); otherwise asking for it
// is an Error that says so. No MPI type appears in this header.
#pragma once
#include <memory>

#include "symmflow/runtime/backend.h"

namespace symmflow::dist {

// True when this build has the mpi backend.
bool mpi_backend_available();
// True when the environment says an MPI launcher started this process
// (OMPI_COMM_WORLD_SIZE, PMIX_RANK, PMI_RANK).
bool launched_by_mpi();
// Initializes MPI if nobody did (and then finalizes it at exit), finds the
// nodes, and attaches to the node's control block. Collective over MPI_COMM_WORLD.
std::unique_ptr<Backend> make_mpi_backend();

}  // namespace symmflow::dist
