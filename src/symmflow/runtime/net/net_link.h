// NetLink: byte messages between the members of a process group that do not
// share memory (ranks on other nodes). The mpi backend implements it over an
// MPI communicator of the group; the shm backend never needs one.
//
// Everything is nonblocking: the runtime polls test() inside its own waits
// (net_wait below), so every wait keeps the deadline and the liveness checks
// of the shared-memory waits (a blocking MPI_Wait would not).
//
// Matching: messages from one sender to one receiver with the same (lane, tag)
// match in the order they were sent (MPI's rule). The lanes are separate
// matching spaces, so collectives never match a user's P2P message.
//
//   auto r = link.irecv(buf, n, peer, /*tag=*/0, NetLink::Lane::coll);
//   ... link.isend(mine, n, peer, 0, NetLink::Lane::coll) ...
//   net_wait(link, r, site, liveness);
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "symmflow/runtime/shm/wait.h"

namespace symmflow::dist {

class NetLink {
 public:
  enum class Lane { p2p = 0, coll = 1 };
  using Request = int64_t;  // an id, valid until test() has returned true

  virtual ~NetLink() = default;
  // Group ranks. `bytes` < 2 GiB (one MPI message).
  virtual Request isend(const void* buf, size_t bytes, int peer, int tag, Lane lane) = 0;
  virtual Request irecv(void* buf, size_t bytes, int peer, int tag, Lane lane) = 0;
  // True once the request is complete (its id is then released); for a receive,
  // *received is the number of bytes that arrived. Throws on a transport error.
  virtual bool test(Request r, size_t* received = nullptr) = 0;
  // The largest tag (>= 32767).
  virtual int max_tag() const = 0;
  // "MPI (tcp)" etc., for messages.
  virtual std::string describe() const = 0;
};

// Blocks until `r` completes: polls test() (spin, then yield, then short
// sleeps), checks `liveness` and the wait deadline (runtime::wait_timeout_s)
// like runtime::wait_slow. Returns the received byte count.
size_t net_wait(NetLink& link, NetLink::Request r, const runtime::WaitSite& site,
                runtime::LivenessCheck* liveness);
// Waits for every request of `rs` (in any order of completion).
void net_wait_all(NetLink& link, std::vector<NetLink::Request>& rs, const runtime::WaitSite& site,
                  runtime::LivenessCheck* liveness);

}  // namespace symmflow::dist
