// One rank of `symmflow bench collectives`: for each size, checks every op's
// result against a reference computed locally from all ranks' deterministic
// inputs (a wrong result exits 1: a benchmark never times broken code), then
// times it. Rank 0 prints one JSON record per (op, impl, size).
#include <fmt/format.h>

#include <unistd.h>

#include <cstring>
#include <functional>
#include <vector>

#include "symmflow/tools/bench_common.h"
#include "symmflow/runtime/collectives/collectives.h"
#include "symmflow/runtime/p2p/engine.h"
#include "symmflow/runtime/p2p/p2p.h"
#include "symmflow/runtime/shm/signal_pad.h"
#include "symmflow/runtime/symm.h"
#include "symmflow/runtime/world.h"
#include "symmflow/tools/bench_worker.h"

namespace symmflow::tools {
namespace {

using dist::AllReduceAlgo;
using dist::ReduceOp;

struct Ctx {
  dist::ProcessGroup& g;
  int trials;
};

double time_op(Ctx& c, const std::function<void()>& op) { return time_collective_us(c.g, c.trials, op); }

void fill_input(const Tensor& t, int rank) {
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = sfbench::input_value(rank, i);
}

void expect_equal(const Tensor& got, const float* want, int64_t n, const std::string& what, int rank) {
  if (std::memcmp(got.data_ptr(), want, size_t(n) * 4) == 0) return;
  const float* g = got.data<float>();
  for (int64_t i = 0; i < n; ++i)
    if (std::memcmp(&g[i], &want[i], 4) != 0)
      fail("bench: {} gives a wrong result on rank {} at element {}: got {}, expected {}", what, rank, i,
           g[i], want[i]);
}

void emit(Ctx& c, const std::string& op, const std::string& impl, int64_t bytes, double us) {
  if (c.g.rank() == 0) fmt::print("{}\n", sfbench::record(op, impl, c.g.size(), bytes, us));
  std::fflush(stdout);
}

bool wanted(const std::string& ops, const char* op) { return ops.find(op) != std::string::npos; }

// One round trip between ranks 0 and 1: rank 0 sends `send` and receives into
// `recv`, rank 1 the other way round; the other ranks do nothing.
std::function<void()> ping_pong(dist::ProcessGroup& g, const Tensor& send, const Tensor& recv) {
  return [&g, send, recv] {
    if (g.rank() == 0) {
      dist::isend(g, send, 1).wait();
      dist::irecv(g, recv, 1).wait();
    } else if (g.rank() == 1) {
      dist::irecv(g, recv, 0).wait();
      dist::isend(g, send, 0).wait();
    }
  };
}

}  // namespace

double time_collective_us(dist::ProcessGroup& g, int trials, const std::function<void()>& op) {
  Tensor scratch = Tensor::empty({1}, DType::f64);  // one f64 for agreeing on times across ranks
  auto max_over_ranks = [&](double v) {
    scratch.data<double>()[0] = v;
    dist::all_reduce_(g, scratch, ReduceOp::max);
    return scratch.data<double>()[0];
  };
  sfbench::TimingOptions to;
  to.trials = trials;
  to.sync = [&] { g.barrier("bench trial"); };
  to.agree = max_over_ranks;
  return sfbench::time_op(op, to).median_us();
}

int run_bench_worker(const BenchWorkerOptions& o) {
  dist::init();
  dist::ProcessGroup& g = dist::world();
  const int W = g.size(), me = g.rank();
  Ctx c{g, o.trials};
  for (int64_t req : sfbench::parse_sizes(o.sizes)) {
    const int64_t n = std::max<int64_t>(req / 4 / W * W, W);  // f32 elements, a multiple of W
    const int64_t bytes = n * 4;
    std::vector<float> ref(n);
    for (int64_t i = 0; i < n; ++i) {
      float s = 0;
      for (int r = 0; r < W; ++r) s += sfbench::input_value(r, i);
      ref[i] = s;
    }
    // Symmetric buffers are collective allocations: every rank makes them, always.
    Tensor x = symm::empty({n}, DType::f32, g);
    // The output is symmetric too: the compiler plans collective outputs there.
    Tensor out = symm::empty({n}, DType::f32, g);
    Tensor regular = Tensor::empty({n}, DType::f32);
    fill_input(x, me);
    fill_input(regular, me);

    if (wanted(o.ops, "all_reduce")) {
      for (auto [algo, name] : {std::pair{AllReduceAlgo::one_shot, "one_shot"},
                                std::pair{AllReduceAlgo::two_shot, "two_shot"}}) {
        dist::all_reduce(g, out, x, ReduceOp::sum, algo);
        expect_equal(out, ref.data(), n, fmt::format("all_reduce {}", name), me);
        fill_input(x, me);  // an algorithm may use its input as scratch
        double us = time_op(c, [&] { dist::all_reduce(g, out, x, ReduceOp::sum, algo); });
        emit(c, "all_reduce", name, bytes, us);
        fill_input(x, me);
      }
      dist::all_reduce(g, out, regular, ReduceOp::sum);
      expect_equal(out, ref.data(), n, "all_reduce staged", me);
      double us = time_op(c, [&] { dist::all_reduce(g, out, regular, ReduceOp::sum); });
      emit(c, "all_reduce", "staged", bytes, us);
      fill_input(regular, me);
    }
    if (wanted(o.ops, "all_gather")) {  // `bytes` is the gathered size, as for MPI
      const int64_t chunk = n / W;
      Tensor in = symm::empty({chunk}, DType::f32, g);
      fill_input(in, me);
      std::vector<float> want(n);
      for (int r = 0; r < W; ++r)
        for (int64_t i = 0; i < chunk; ++i) want[r * chunk + i] = sfbench::input_value(r, i);
      dist::all_gather(g, out, in);
      expect_equal(out, want.data(), n, "all_gather", me);
      emit(c, "all_gather", "symmflow", bytes, time_op(c, [&] { dist::all_gather(g, out, in); }));
    }
    if (wanted(o.ops, "reduce_scatter")) {  // `bytes` is the input size
      const int64_t chunk = n / W;
      Tensor part = Tensor::empty({chunk}, DType::f32);
      dist::reduce_scatter(g, part, x, ReduceOp::sum);
      expect_equal(part, ref.data() + me * chunk, chunk, "reduce_scatter", me);
      fill_input(x, me);
      emit(c, "reduce_scatter", "symmflow", bytes,
           time_op(c, [&] { dist::reduce_scatter(g, part, x, ReduceOp::sum); }));
      fill_input(x, me);
    }
    if (wanted(o.ops, "p2p") && W >= 2) {  // ping-pong 0 <-> 1, one-way time
      Tensor y = symm::empty({n}, DType::f32, g);
      auto pingpong = ping_pong(g, x, y);
      pingpong();
      std::vector<float> want(n);
      for (int64_t i = 0; i < n; ++i) want[i] = sfbench::input_value(me == 0 ? 1 : 0, i);
      if (me <= 1) expect_equal(y, want.data(), n, "p2p ping-pong", me);
      emit(c, "p2p", "symmflow", bytes, time_op(c, pingpong) / 2);
      // The same without eager sends (every send waits for the receive post),
      // side by side: what the eager threshold (p2p/channel.h) was chosen by.
      dist::detail::p2p_set_eager_max_bytes(g, 0);
      emit(c, "p2p", "rendezvous", bytes, time_op(c, pingpong) / 2);
      dist::detail::p2p_set_eager_max_bytes(g, runtime::kEagerMaxBytes);
      // The same with regular (non-symmetric) buffers: the staged paths (eager
      // slots up to runtime::kEagerMaxBytes, the mailbox above), copies counted.
      Tensor regular_y = Tensor::empty({n}, DType::f32);
      auto pingpong_regular = ping_pong(g, regular, regular_y);
      pingpong_regular();
      if (me <= 1) expect_equal(regular_y, want.data(), n, "p2p ping-pong (regular buffers)", me);
      emit(c, "p2p", "staged", bytes, time_op(c, pingpong_regular) / 2);
    }
    // Column halos (opt-in: --ops column_halo): one column of an [n, 16] f32
    // grid to the peer's column, ping-pong 0 <-> 1, one-way; `bytes` is the
    // column's. Symmetric grids: the sender writes the peer's column in place
    // (the receive post carries its layout, core/compact_layout.h). Regular
    // grids: the staged path (eager slots up to 4 KiB, the mailbox above), which
    // symmetric columns took too before posts carried layouts.
    if (wanted(o.ops, "column_halo") && W >= 2) {
      constexpr int64_t kWidth = 16;
      for (bool symmetric : {true, false}) {
        auto grid = [&] {
          return symmetric ? symm::empty({n, kWidth}, DType::f32, g) : Tensor::empty({n, kWidth}, DType::f32);
        };
        Tensor a = grid(), b = grid();
        Tensor send = a.as_strided({n}, {kWidth}, kWidth - 2), recv = b.as_strided({n}, {kWidth}, 0);
        float* col = a.data<float>() + (kWidth - 2);
        for (int64_t i = 0; i < n; ++i) col[i * kWidth] = sfbench::input_value(me, i);
        auto pingpong = ping_pong(g, send, recv);
        pingpong();
        if (me <= 1) {
          const float* got = b.data<float>();
          for (int64_t i = 0; i < n; ++i)
            SF_CHECK(got[i * kWidth] == sfbench::input_value(1 - me, i),
                     "bench: column halo gives a wrong result on rank {} at element {}", me, i);
        }
        emit(c, "column_halo", symmetric ? "direct" : "staged", bytes, time_op(c, pingpong) / 2);
        g.barrier("column halo end");  // nobody reads a grid while it is freed
      }
    }
    if (wanted(o.ops, "memcpy")) {  // the bound: every rank copies at once
      Tensor dst = Tensor::empty({n}, DType::f32);
      double us = time_op(c, [&] { std::memcpy(dst.data_ptr(), regular.data_ptr(), size_t(bytes)); });
      if (me == 0)
        fmt::print("{{\"op\": \"memcpy\", \"nproc\": {}, \"bytes\": {}, \"median_us\": {:.3f}, \"gbps\": {:.3f}}}\n",
                   W, bytes, us, double(bytes) / (us * 1e3));
      std::fflush(stdout);
    }
  }
  // The signal pad under everything (opt-in: --ops signal; not size-dependent).
  // "ping_pong": one-way time of a signal answered by a signal (ranks 0 <-> 1).
  // "wake_up": a signal to a receiver that already sleeps on its futex, 3 ms
  // after the round starts, measured by the receiver against the sender's
  // timestamp (steady_clock is one clock for the node), median of 21 rounds.
  if (wanted(o.ops, "signal") && W >= 2 && !g.spans_nodes()) {
    dist::SignalPad& pad = g.signals();
    // Channels free of collectives (coll_state.h: 5..15 unused); nothing else
    // signals on them in this process.
    constexpr int kPing = 13, kWake = 14, kResult = 15;
    auto pingpong = [&] {
      if (me == 0) {
        pad.signal(1, kPing);
        pad.wait_next(1, kPing, "bench pong");
      } else if (me == 1) {
        pad.wait_next(0, kPing, "bench ping");
        pad.signal(0, kPing);
      }
    };
    emit(c, "signal", "ping_pong", 8, time_op(c, pingpong) / 2);
    auto stamp = g.heap().allocate(64);
    std::vector<double> wake_s;
    for (int i = 0; i < 21; ++i) {
      g.barrier("bench wake-up round");
      if (me == 0) {
        usleep(3000);  // the receiver is past its spin and yield phases
        double t = sfbench::now_s();
        pad.put_with_signal(stamp->peer_ptr(1), &t, sizeof t, 1, kWake);
      } else if (me == 1) {
        pad.wait_next(0, kWake, "bench sleeping receiver");
        wake_s.push_back(sfbench::now_s() - *static_cast<double*>(stamp->data()));
      }
    }
    // Rank 1 measured; rank 0 prints: pass the median over in the stamp slot.
    double med = me == 1 ? sfbench::stats_of(wake_s).median : 0;
    if (me == 1) pad.put_with_signal(stamp->peer_ptr(0), &med, sizeof med, 0, kResult);
    if (me == 0) {
      pad.wait_next(1, kResult, "bench wake-up result");
      med = *static_cast<double*>(stamp->data());
    }
    emit(c, "signal", "wake_up", 8, med * 1e6);
    g.barrier("bench signal done");
  }
  return 0;
}

}  // namespace symmflow::tools
