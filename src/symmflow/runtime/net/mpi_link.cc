// MpiLink (mpi_link.h): requests live in a table indexed by the NetLink
// Request id, so callers never see an MPI_Request.
#include "symmflow/runtime/net/mpi_link.h"

#if SYMMFLOW_HAVE_MPI
#include <climits>
#include <vector>

#include "symmflow/core/error.h"

namespace symmflow::dist {

namespace {

class MpiLink final : public NetLink {
 public:
  MpiLink(MPI_Comm comm, std::string group, int world_rank)
      : group_(std::move(group)), world_rank_(world_rank) {
    lanes_[0] = comm;
    check(MPI_Comm_dup(comm, &lanes_[1]), "MPI_Comm_dup", -1, 0);
    for (MPI_Comm c : lanes_) MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm, &rank_);
    void* ub = nullptr;
    int flag = 0;
    MPI_Comm_get_attr(comm, MPI_TAG_UB, &ub, &flag);
    max_tag_ = flag && ub ? *static_cast<int*>(ub) : 32767;
  }

  ~MpiLink() override {
    // Requests still pending belong to a failing job; cancelling them is all
    // that can be done before the communicators go.
    for (auto& r : reqs_) {
      if (r != MPI_REQUEST_NULL) {
        MPI_Cancel(&r);
        MPI_Request_free(&r);
      }
    }
    for (MPI_Comm& c : lanes_) MPI_Comm_free(&c);
  }

  Request isend(const void* buf, size_t bytes, int peer, int tag, Lane lane) override {
    check_args(bytes, tag, "isend");
    Request id = slot();
    check(MPI_Isend(buf, int(bytes), MPI_BYTE, peer, tag, lanes_[int(lane)], &reqs_[size_t(id)]),
          "MPI_Isend", peer, tag);
    return id;
  }

  Request irecv(void* buf, size_t bytes, int peer, int tag, Lane lane) override {
    check_args(bytes, tag, "irecv");
    Request id = slot();
    check(MPI_Irecv(buf, int(bytes), MPI_BYTE, peer, tag, lanes_[int(lane)], &reqs_[size_t(id)]),
          "MPI_Irecv", peer, tag);
    return id;
  }

  bool test(Request id, size_t* received) override {
    SF_CHECK(id >= 0 && size_t(id) < reqs_.size(), "NetLink::test: unknown request {}", id);
    MPI_Request& r = reqs_[size_t(id)];
    int flag = 0;
    MPI_Status st;
    int rc = MPI_Test(&r, &flag, &st);
    if (rc != MPI_SUCCESS) {
      free_.push_back(id);
      check(rc, "MPI_Test", -1, -1);
    }
    if (!flag) return false;
    if (received) {
      int n = 0;
      MPI_Get_count(&st, MPI_BYTE, &n);
      *received = size_t(n);
    }
    free_.push_back(id);
    return true;
  }

  int max_tag() const override { return max_tag_; }
  std::string describe() const override { return "MPI"; }

 private:
  void check_args(size_t bytes, int tag, const char* op) const {
    SF_CHECK(bytes <= size_t(INT_MAX), "{} on group '{}': {} bytes in one message between nodes, "
             "at most {}", op, group_, bytes, INT_MAX);
    SF_CHECK(tag >= 0 && tag <= max_tag_, "{} on group '{}': tag {} is outside MPI's [0, {}] "
             "(needed between nodes)", op, group_, tag, max_tag_);
  }

  Request slot() {
    if (!free_.empty()) {
      Request id = free_.back();
      free_.pop_back();
      return id;
    }
    reqs_.push_back(MPI_REQUEST_NULL);
    return Request(reqs_.size() - 1);
  }

  void check(int rc, const char* call, int peer, int tag) {
    if (rc == MPI_SUCCESS) return;
    runtime::note_comm_failure();
    fail("{} on group '{}' (rank {}, world rank {}{}{}) failed: {}", call, group_, rank_,
         world_rank_, peer >= 0 ? fmt::format(", peer {}", peer) : std::string(),
         tag >= 0 ? fmt::format(", tag {}", tag) : std::string(), mpi_error_string(rc));
  }

  std::string group_;
  int world_rank_, rank_ = 0, max_tag_ = 32767;
  MPI_Comm lanes_[2] = {MPI_COMM_NULL, MPI_COMM_NULL};
  std::vector<MPI_Request> reqs_;
  std::vector<Request> free_;
};

}  // namespace

std::string mpi_error_string(int rc) {
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) return fmt::format("MPI error code {}", rc);
  return std::string(msg, size_t(len));
}

std::unique_ptr<NetLink> make_mpi_link(MPI_Comm* comm, std::string group, int world_rank) {
  auto l = std::make_unique<MpiLink>(*comm, std::move(group), world_rank);
  *comm = MPI_COMM_NULL;
  return l;
}

}  // namespace symmflow::dist
#endif
