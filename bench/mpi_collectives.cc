// The MPI baseline for `symmflow bench collectives`: MPI_Allreduce, MPI_Allgather,
// MPI_Reduce_scatter_block and a ping-pong on the same sizes and inputs as the
// symmflow side. Every result is checked against a locally computed reference
// before it is timed; a wrong result exits 1.
//
//   mpirun -np 2 --bind-to core sf_mpi_bench --sizes 1K-64M --trials 7
// prints one JSON record per (op, size) on rank 0's stdout.
#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "symmflow/tools/bench_common.h"

namespace {

int rank_, world_;

void die(const std::string& msg) {
  std::fprintf(stderr, "sf_mpi_bench rank %d: %s\n", rank_, msg.c_str());
  MPI_Abort(MPI_COMM_WORLD, 1);
}

// Runs `op` reps times per trial, trials times; returns the median over trials of
// the slowest rank's time per op, in microseconds.
template <typename F>
double time_op(F&& op, int trials) {
  sfbench::TimingOptions to;
  to.trials = trials;
  to.sync = [] { MPI_Barrier(MPI_COMM_WORLD); };
  to.agree = [](double s) {
    MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return s;
  };
  return sfbench::time_op(op, to).median_us();
}

void emit(const std::string& op, int64_t bytes, double us) {
  if (rank_ == 0) std::printf("%s\n", sfbench::record(op, "mpi", world_, bytes, us).c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &world_);
  std::string sizes = "1K-64M";
  int trials = 7;
  std::string ops = "all_reduce,all_gather,reduce_scatter,p2p";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--sizes" && i + 1 < argc) sizes = argv[++i];
    else if (a == "--trials" && i + 1 < argc) trials = std::stoi(argv[++i]);
    else if (a == "--ops" && i + 1 < argc) ops = argv[++i];
    else die("unknown argument '" + a + "' (expected --sizes S --trials N --ops a,b)");
  }
  auto want = [&](const char* op) { return ops.find(op) != std::string::npos; };
  std::vector<int64_t> list;
  try {
    list = sfbench::parse_sizes(sizes);
  } catch (const std::exception& e) {
    die(e.what());
  }
  for (int64_t req : list) {
    // f32 elements per rank, a multiple of the world size: the sizes symmflow's
    // side runs (tools/bench_worker.cc), so that 3 ranks compare 1020 with 1020 bytes.
    const int64_t n = std::max<int64_t>(req / 4 / world_ * world_, world_);
    const int64_t bytes = n * 4;
    std::vector<float> in(n), out(n), ref(n), gather(n * world_);
    for (int64_t i = 0; i < n; ++i) in[i] = sfbench::input_value(rank_, i);
    for (int64_t i = 0; i < n; ++i) {
      float s = 0;
      for (int r = 0; r < world_; ++r) s += sfbench::input_value(r, i);
      ref[i] = s;
    }
    if (want("all_reduce")) {
      MPI_Allreduce(in.data(), out.data(), int(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      if (std::memcmp(out.data(), ref.data(), n * 4) != 0) die("MPI_Allreduce result is wrong");
      emit("all_reduce", bytes, time_op([&] {
             MPI_Allreduce(in.data(), out.data(), int(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
           }, trials));
    }
    if (want("all_gather")) {
      // `bytes` is the gathered output size, as for the symmflow side.
      const int64_t chunk = n / world_;
      MPI_Allgather(in.data(), int(chunk), MPI_FLOAT, gather.data(), int(chunk), MPI_FLOAT,
                    MPI_COMM_WORLD);
      for (int r = 0; r < world_; ++r)
        for (int64_t i = 0; i < chunk; ++i)
          if (gather[r * chunk + i] != sfbench::input_value(r, i)) die("MPI_Allgather result is wrong");
      emit("all_gather", bytes, time_op([&] {
             MPI_Allgather(in.data(), int(chunk), MPI_FLOAT, gather.data(), int(chunk), MPI_FLOAT,
                           MPI_COMM_WORLD);
           }, trials));
    }
    if (want("reduce_scatter")) {
      // `bytes` is the input size; each rank gets bytes / world.
      const int64_t chunk = n / world_;
      MPI_Reduce_scatter_block(in.data(), out.data(), int(chunk), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      if (std::memcmp(out.data(), ref.data() + rank_ * chunk, chunk * 4) != 0)
        die("MPI_Reduce_scatter_block result is wrong");
      emit("reduce_scatter", bytes, time_op([&] {
             MPI_Reduce_scatter_block(in.data(), out.data(), int(chunk), MPI_FLOAT, MPI_SUM,
                                      MPI_COMM_WORLD);
           }, trials));
    }
    if (want("p2p") && world_ >= 2) {
      // Ping-pong between ranks 0 and 1; the time is one way (half a round trip).
      auto pingpong = [&] {
        if (rank_ == 0) {
          MPI_Send(in.data(), int(n), MPI_FLOAT, 1, 0, MPI_COMM_WORLD);
          MPI_Recv(out.data(), int(n), MPI_FLOAT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank_ == 1) {
          MPI_Recv(out.data(), int(n), MPI_FLOAT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Send(in.data(), int(n), MPI_FLOAT, 0, 0, MPI_COMM_WORLD);
        }
      };
      pingpong();
      if (rank_ == 0)
        for (int64_t i = 0; i < n; ++i)
          if (out[i] != sfbench::input_value(1, i)) die("MPI ping-pong result is wrong");
      emit("p2p", bytes, time_op(pingpong, trials) / 2);
    }
  }
  MPI_Finalize();
  return 0;
}
