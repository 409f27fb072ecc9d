// Asynchronous collectives (iall_reduce_, ...): compute runs between start and
// wait while the call is in flight, several calls and P2P operations are in
// flight at once and complete in issue order, and a collective never waits
// without driving the group's pending P2P (and the other way round).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <vector>

#include "symmflow/core/error.h"
#include "symmflow/runtime/collectives/collectives.h"
#include "symmflow/runtime/p2p/p2p.h"
#include "symmflow/runtime/symm.h"
#include "symmflow/runtime/test_util.h"
#include "symmflow/runtime/world.h"

namespace symmflow::dist {
namespace {

using runtime::testing::run_job;
using Clock = std::chrono::steady_clock;

double since_ms(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

Tensor filled(int64_t n, float v, bool sym = true) {
  Tensor t = sym ? symm::empty({n}, DType::f32) : Tensor::empty({n}, DType::f32);
  float* p = static_cast<float*>(t.data_ptr());
  for (int64_t i = 0; i < n; ++i) p[i] = v;
  return t;
}

void expect_all(const Tensor& t, float want, const char* what) {
  const float* p = static_cast<const float*>(t.data_ptr());
  for (int64_t i = 0; i < t.numel(); ++i)
    SF_CHECK(p[i] == want, "{}: rank {}: element {} is {}, expected {}", what, world().rank(), i, p[i], want);
}

// A unit of compute that the optimiser cannot drop.
double compute_chunk(std::vector<double>& v) {
  double s = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = v[i] * 1.000001 + 0.5;
    s += v[i];
  }
  return s;
}

// The last rank joins 300 ms late. Every other rank starts its all_reduce,
// which cannot complete before the last rank arrives, and computes meanwhile:
// start returns at once, compute chunks run while is_completed() says false,
// the call completes during the compute (polled, not waited for), and the
// result is right. The late rank itself computes between its start and wait.
void compute_between_start_and_wait(int nproc) {
  auto r = run_job(nproc, [] {
    init();
    auto& g = world();
    const int W = g.size(), me = g.rank(), late = W - 1;
    for (int64_t n : {int64_t(256), int64_t(1 << 18)}) {  // push (1 KiB) and pull/two-shot (1 MiB)
      Tensor x = filled(n, float(me + 1));
      // The group's first collective sets up its state (a collective
      // allocation and a barrier): not what this test measures.
      all_reduce_(g, filled(n, 0.0f), ReduceOp::sum);
      g.barrier("round");
      if (me == late) usleep(300000);
      auto t0 = Clock::now();
      Work w = iall_reduce_(g, x, ReduceOp::sum);
      const double start_ms = since_ms(t0);
      std::vector<double> v(4096, 1.0);
      int chunks_in_flight = 0, chunks = 0;
      double sink = 0;
      bool completed = false;
      while (since_ms(t0) < 5000) {
        sink += compute_chunk(v);
        ++chunks;
        if (w.is_completed()) {
          completed = true;
          break;
        }
        ++chunks_in_flight;
      }
      SF_CHECK(completed, "rank {}: the all_reduce of {} elements did not complete within 5 s of "
               "compute and polling", me, n);
      w.wait();
      expect_all(x, float(W * (W + 1) / 2), "iall_reduce_");
      if (me != late) {
        SF_CHECK(start_ms < 100, "rank {}: iall_reduce_ blocked for {:.1f} ms at start", me, start_ms);
        // The call was in flight for >= 300 ms: compute ran meanwhile, many chunks.
        SF_CHECK(chunks_in_flight >= 10, "rank {}: only {} compute chunks ran while the all_reduce "
                 "was in flight", me, chunks_in_flight);
        SF_CHECK(since_ms(t0) >= 250, "rank {}: completed after {:.1f} ms, before the late rank "
                 "joined", me, since_ms(t0));
      }
      std::printf("rank %d n=%lld: start %.3f ms, %d chunks in flight (sink %g)\n", me,
                  (long long)n, start_ms, chunks_in_flight, sink > 0 ? 1.0 : 0.0);
    }
    return 0;
  });
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  runtime::testing::expect_clean(r);
}

TEST(Async, ComputeRunsWhileAllReduceInFlightAtTwoRanks) { compute_between_start_and_wait(2); }
TEST(Async, ComputeRunsWhileAllReduceInFlightAtThreeRanks) { compute_between_start_and_wait(3); }
TEST(Async, ComputeRunsWhileAllReduceInFlightAtFourRanks) { compute_between_start_and_wait(4); }

// Several collectives and P2P operations in flight on one group, waited for in
// reverse order: all complete, each with its own result.
void many_in_flight(int nproc) {
  auto r = run_job(nproc, [] {
    init();
    auto& g = world();
    const int W = g.size(), me = g.rank();
    const int next = (me + 1) % W, prev = (me + W - 1) % W;
    for (int round = 0; round < 20; ++round) {
      Tensor a = filled(300, float(me + round));              // push
      Tensor b = filled(100000, float(2 * me + 1), false);    // regular: staged pull
      Tensor c_in = filled(64, float(me)), c_out = symm::empty({64 * W}, DType::f32);
      Tensor d = filled(5000, me == 0 ? 7.0f : -1.0f);
      Tensor s = filled(1000, float(me)), rcv = filled(1000, -1.0f);
      std::vector<Work> works;
      works.push_back(iall_reduce_(g, a, ReduceOp::sum));
      works.push_back(irecv(g, rcv, prev, 3));
      works.push_back(iall_reduce_(g, b, ReduceOp::max));
      works.push_back(isend(g, s, next, 3));
      works.push_back(iall_gather(g, c_out, c_in));
      works.push_back(ibroadcast_(g, d, 0));
      for (size_t i = works.size(); i-- > 0;) works[i].wait();
      expect_all(a, float(W * (W - 1) / 2 + W * round), "iall_reduce_ (push)");
      expect_all(b, float(2 * (W - 1) + 1), "iall_reduce_ (max, staged)");
      expect_all(rcv, float(prev), "irecv");
      expect_all(d, 7.0f, "ibroadcast_");
      const float* p = static_cast<const float*>(c_out.data_ptr());
      for (int j = 0; j < W; ++j)
        SF_CHECK(p[j * 64] == float(j), "iall_gather: rank {} chunk {} is {}", me, j, p[j * 64]);
    }
    return 0;
  });
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  runtime::testing::expect_clean(r);
}

TEST(Async, ManyInFlightWaitedInReverseAtTwoRanks) { many_in_flight(2); }
TEST(Async, ManyInFlightWaitedInReverseAtThreeRanks) { many_in_flight(3); }
TEST(Async, ManyInFlightWaitedInReverseAtFourRanks) { many_in_flight(4); }

// The progress rule (progress.h). Rank 0 waits for a receive while its
// all_reduce is in flight; rank 1 finishes its all_reduce before it sends.
// Rank 1's all_reduce (pull: it waits for rank 0's exit signal) completes only
// if rank 0's receive wait drives rank 0's collective. And the mirror image:
// a rank blocked in a collective must answer a peer's pending send.
TEST(Async, WaitsDriveEachOther) {
  auto r = run_job(2, [] {
    init();
    auto& g = world();
    const int me = g.rank();
    for (int64_t n : {int64_t(100), int64_t(1 << 16)}) {
      Tensor x = filled(n, float(me + 1));
      Tensor m = filled(n, float(me), false);  // regular: a staged (mailbox) send
      g.barrier("round");
      if (me == 0) {
        Work c = iall_reduce_(g, x, ReduceOp::sum);
        irecv(g, m, 1).wait();
        c.wait();
        expect_all(m, 1.0f, "irecv while an all_reduce is in flight");
      } else {
        usleep(50000);  // rank 0 is in its receive wait, its all_reduce suspended
        all_reduce_(g, x, ReduceOp::sum);
        isend(g, m, 0).wait();
      }
      expect_all(x, 3.0f, "all_reduce_");
      // Mirror: rank 1 sends (staged, needs rank 0 to drain the mailbox) and
      // waits in a blocking all_reduce; rank 0 receives only after it.
      Tensor big = filled(1 << 18, float(me), false), got = filled(1 << 18, -1.0f, false);
      Tensor y = filled(n, 1.0f);
      g.barrier("round");
      if (me == 1) {
        Work s = isend(g, big, 0, 1);
        usleep(20000);
        all_reduce_(g, y, ReduceOp::sum);
        s.wait();
      } else {
        Work rv = irecv(g, got, 1, 1);
        all_reduce_(g, y, ReduceOp::sum);
        rv.wait();
        expect_all(got, 1.0f, "large irecv across a blocking all_reduce");
      }
      expect_all(y, 2.0f, "all_reduce_ across a P2P transfer");
    }
    return 0;
  });
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  runtime::testing::expect_clean(r);
}

// Arguments are checked when the call starts; a disagreement between ranks
// surfaces from wait() with the message of the blocking form.
TEST(Async, ErrorsSurfaceAtStartAndAtWait) {
  auto r = run_job(2, [] {
    init();
    auto& g = world();
    try {
      (void)iall_gather(g, symm::empty({3}, DType::f32), symm::empty({4}, DType::f32));
      SF_CHECK(false, "iall_gather with a wrong `out` size did not throw at start");
    } catch (const Error& e) {
      SF_CHECK(std::string(e.what()).find("expected `out` with 2 x 4 = 8 elements") != std::string::npos,
               "unexpected message: {}", e.what());
    }
    Tensor t = symm::empty({1000 + g.rank()}, DType::f32);
    Work w = iall_reduce_(g, t, ReduceOp::sum);
    try {
      w.wait();
    } catch (const Error& e) {
      SF_CHECK(std::string(e.what()).find("ranks disagree at collective call #1") != std::string::npos,
               "unexpected message: {}", e.what());
      return 3;
    }
    return 0;
  });
  EXPECT_EQ(r.report.status[0], 3) << r.out << r.err;
  EXPECT_EQ(r.report.status[1], 3) << r.out << r.err;
}

}  // namespace
}  // namespace symmflow::dist
