// MpiLink: the NetLink of the mpi backend (net_link.h) over two communicators
// of a group's members, one per lane, whose ranks are the group ranks. Only
// compiled with MPI (SYMMFLOW_HAVE_MPI).
#pragma once
#if SYMMFLOW_HAVE_MPI
#include <mpi.h>

#include <memory>
#include <string>

#include "symmflow/runtime/net/net_link.h"

namespace symmflow::dist {

// MPI's text for an error code.
std::string mpi_error_string(int rc);

// Takes ownership of *comm (it is freed with the link, and *comm is reset).
std::unique_ptr<NetLink> make_mpi_link(MPI_Comm* comm, std::string group, int world_rank);

}  // namespace symmflow::dist
#endif
