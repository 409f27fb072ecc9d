// Point-to-point: isend / irecv / batch_isend_irecv between ranks of a group
// (multi-process through launch_fn; rank bodies assert with SF_CHECK).
//
// Over 500 lines as one unit: every case (protocols, eager slots, views,
// tags, failures, 2/3/4 ranks) runs through the same job helpers, fill and
// check functions and protocol expectations at the top of this file; split
// into files, each would repeat them.
#include "symmflow/runtime/p2p/p2p.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

#include "symmflow/core/error.h"
#include "symmflow/core/strided.h"
#include "symmflow/runtime/copy_stats.h"
#include "symmflow/runtime/p2p/channel.h"
#include "symmflow/runtime/symm.h"
#include "symmflow/runtime/test_util.h"
#include "symmflow/runtime/world.h"

namespace symmflow::dist {
namespace {

using Clock = std::chrono::steady_clock;
using runtime::testing::run_job;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The value element i of message `msg` from rank `src` carries.
float val(int src, int64_t i, int msg = 0) { return float(src * 100000 + msg * 1000 + i % 997); }

Tensor make(bool symmetric, Shape shape, ProcessGroup& g) {
  return symmetric ? symm::empty(std::move(shape), DType::f32, g)
                   : Tensor::empty_with(regular_allocator(), std::move(shape), DType::f32);
}

// Visits a tensor's elements in row-major order: f(linear index, element&).
void for_each(const Tensor& t, const std::function<void(int64_t, float&)>& f) {
  const int64_t n = t.numel(), nd = t.dim();
  std::vector<int64_t> idx(size_t(nd), 0);
  float* base = static_cast<float*>(t.data_ptr());
  for (int64_t k = 0; k < n; ++k) {
    int64_t off = 0;
    for (int64_t d = 0; d < nd; ++d) off += idx[size_t(d)] * t.strides()[size_t(d)];
    f(k, base[off]);
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (++idx[size_t(d)] < t.sizes()[size_t(d)]) break;
      idx[size_t(d)] = 0;
    }
  }
}
void fill(const Tensor& t, int src, int msg = 0) { for_each(t, [&](int64_t i, float& x) { x = val(src, i, msg); }); }
void fill_const(const Tensor& t, float v) { for_each(t, [&](int64_t, float& x) { x = v; }); }
void expect(const Tensor& t, int src, int msg, const char* what) {
  for_each(t, [&](int64_t i, float& x) {
    SF_CHECK(x == val(src, i, msg), "{}: element {} is {}, expected {} (from rank {}, message {})",
             what, i, x, val(src, i, msg), src, msg);
  });
}

// Resident anonymous + shared-memory KiB (RssAnon + RssShmem). File-backed pages
// are left out: code faulted in late (64 KiB fault-around) is not a leak.
long rss_kib() {
  std::ifstream f("/proc/self/status");
  std::string line;
  long kib = 0;
  while (std::getline(f, line))
    if (line.rfind("RssAnon:", 0) == 0 || line.rfind("RssShmem:", 0) == 0)
      kib += std::atol(line.c_str() + line.find(':') + 1);
  return kib;
}

// Ring: send to next, receive from prev, every symmetric/regular combination.
void ring_job(int nproc) {
  auto r = run_job(nproc, [] {
    init();
    auto& g = world();
    const int me = g.rank(), n = g.size(), next = (me + 1) % n, prev = (me + n - 1) % n;
    int msg = 0;
    for (bool send_sym : {false, true})
      for (bool recv_sym : {false, true})
        for (int64_t count : {int64_t(1), int64_t(1000), int64_t(100000)}) {
          ++msg;
          Tensor x = make(send_sym, {count}, g), y = make(recv_sym, {count}, g);
          fill(x, me, msg);
          fill_const(y, -1);
          g.barrier("ring setup");  // symmetric buffers are reused across iterations
          reset_staged_copy_stats();
          auto w = batch_isend_irecv(g, {P2POp::send(x, next, 3), P2POp::recv(y, prev, 3)});
          SF_CHECK(w.size() == 2, "two works expected");
          w[0].wait();  // the send first: progress must complete the receive side too
          w[1].wait();
          expect(y, prev, msg, "ring");
          auto cs = staged_copy_stats();
          // Rendezvous: staged is one copy in, one out (this rank sends one
          // message and receives one); a put or read copies nothing counted.
          // Small messages may go eager instead (whether the peer's post came
          // first is a race): a counted copy into the slot and one out of it.
          const uint64_t nbytes = uint64_t(count) * 4;
          const uint64_t want = (send_sym || recv_sym) ? 0 : 2;
          if (nbytes <= runtime::kEagerMaxBytes)
            SF_CHECK(cs.count >= want && cs.count <= 2 && cs.bytes == cs.count * nbytes,
                     "send_sym={} recv_sym={} count={}: {} staged copies of {} bytes, expected {} to 2",
                     send_sym, recv_sym, count, cs.count, cs.bytes, want);
          else
            SF_CHECK(cs.count == want && cs.bytes == want * nbytes,
                     "send_sym={} recv_sym={} count={}: {} staged copies ({} bytes), expected {}",
                     send_sym, recv_sym, count, cs.count, cs.bytes, want);
          g.barrier("ring end");  // nobody still reads x before it is freed
        }
    return 0;
  });
  SF_EXPECT_JOB_OK(r);
}

// A rendezvous send (P2POp::rendezvous) never goes eager: a small message to a
// symmetric receive buffer posted late (the receiver sleeps first) is put once,
// with no counted copy, where the eager path copies it into a slot and out.
void rendezvous_job(int nproc) {
  auto r = run_job(nproc, [] {
    init();
    auto& g = world();
    const int me = g.rank(), n = g.size(), next = (me + 1) % n, prev = (me + n - 1) % n;
    int msg = 100;
    for (bool rendezvous : {false, true}) {
      ++msg;
      Tensor x = make(true, {16}, g), y = make(true, {16}, g);
      fill(x, me, msg);
      fill_const(y, -1);
      g.barrier("rendezvous setup");
      reset_staged_copy_stats();
      P2POp send = P2POp::send(x, next, 5);
      send.rendezvous = rendezvous;
      std::vector<Work> w;
      if (me % 2 == 1) std::this_thread::sleep_for(std::chrono::milliseconds(50));  // its post comes late
      w = batch_isend_irecv(g, {P2POp::recv(y, prev, 5), send});
      for (auto& x : w) x.wait();
      expect(y, prev, msg, "rendezvous");
      g.barrier("rendezvous counted");  // every rank's copies of this round are done
      auto cs = staged_copy_stats();
      if (rendezvous)
        SF_CHECK(cs.count == 0, "rank {}: a rendezvous send made {} staged copies", me, cs.count);
      g.barrier("rendezvous end");
    }
    return 0;
  });
  SF_EXPECT_JOB_OK(r);
}

// Column halos: strided views of symmetric grids move once, rank to rank. The
// receive post carries the column's layout (core/compact_layout.h): the sender
// writes into the peer's column in place (put), or the receiver reads the
// sender's strided symmetric band (read). No staged copy is counted, and the
// rest of each receiving grid is untouched. A layout with four strided dims
// does not fit an event and is staged (two counted copies: mine out, mine in).
void column_halo_job(int nproc) {
  auto r = run_job(nproc, [] {
    init();
    auto& g = world();
    const int me = g.rank(), n = g.size(), next = (me + 1) % n, prev = (me + n - 1) % n;
    constexpr int64_t R = 64, C = 48;
    Tensor a = make(true, {R, C}, g), b = make(true, {R, C}, g);  // symmetric grids
    Tensor ra = make(false, {R, C}, g), rb = make(false, {R, C}, g);  // regular grids
    struct Case {
      const char* what;
      Tensor send, recv, recv_grid;
      uint64_t staged;  // counted copies on this rank
    };
    const std::vector<Case> cases = {
        {"symmetric column -> symmetric column (put)", a.as_strided({R, 1}, {C, 1}, C - 2), b.as_strided({R, 1}, {C, 1}, 1), b, 0},
        {"symmetric band -> regular band (read)", a.as_strided({R, 2}, {C, 1}, C - 3), rb.as_strided({R, 2}, {C, 1}, 0), rb, 0},
        {"regular column -> symmetric column (put)", ra.as_strided({R}, {C}, 5), b.as_strided({R}, {C}, 0), b, 0},
        {"four strided dims: staged", a.as_strided({2, 2, 2, 2}, {96, 16, 4, 1}, 0),
         b.as_strided({2, 2, 2, 2}, {96, 16, 4, 1}, 1), b, 2},
    };
    int msg = 200;
    for (const Case& c : cases) {
      ++msg;
      fill(c.send, me, msg);
      fill_const(c.recv_grid, -1);
      g.barrier("column setup");
      reset_staged_copy_stats();
      P2POp send = P2POp::send(c.send, next, 9);
      send.rendezvous = true;  // small: never eager, so the count is the protocol's
      for (auto& w : batch_isend_irecv(g, {P2POp::recv(c.recv, prev, 9), send})) w.wait();
      expect(c.recv, prev, msg, c.what);
      int64_t written = 0;
      for_each(c.recv_grid, [&](int64_t, float& x) { written += x != -1.0f; });
      SF_CHECK(written == c.recv.numel(), "{}: {} elements of the grid written, expected {}", c.what, written,
               c.recv.numel());
      g.barrier("column counted");
      const auto cs = staged_copy_stats();
      SF_CHECK(cs.count == c.staged, "rank {}: {}: {} staged copies, expected {}", me, c.what, cs.count, c.staged);
      g.barrier("column end");
    }
    // The ends may be different dtypes of the same bytes: a band of f32
    // columns into an f64 column of a symmetric grid, put in place (the post
    // carries the element size).
    Tensor d = symm::empty({R, C}, DType::f64, g);
    std::memset(d.data_ptr(), 0, size_t(d.nbytes()));
    Tensor band = a.as_strided({R / 2, 2}, {C, 1}, 3), col = d.as_strided({R / 2}, {C}, 7);
    fill(band, me, ++msg);
    g.barrier("dtype setup");
    reset_staged_copy_stats();
    P2POp send = P2POp::send(band, next, 10);
    send.rendezvous = true;
    for (auto& w : batch_isend_irecv(g, {P2POp::recv(col, prev, 10), send})) w.wait();
    Tensor want = make(false, {R}, g);
    fill(want, prev, msg);
    std::vector<char> got(size_t(col.nbytes()));
    symmflow::pack(col, got.data());
    SF_CHECK(std::memcmp(got.data(), want.data_ptr(), got.size()) == 0, "rank {}: f32 band into f64 column: wrong bytes", me);
    g.barrier("dtype counted");
    SF_CHECK(staged_copy_stats().count == 0, "rank {}: f32 band into f64 column: {} staged copies", me,
             staged_copy_stats().count);
    g.barrier("dtype end");
    return 0;
  });
  SF_EXPECT_JOB_OK(r);
}

TEST(P2P, ColumnHalosOfSymmetricGridsMoveWithoutStagingAtTwoRanks) { column_halo_job(2); }
TEST(P2P, ColumnHalosOfSymmetricGridsMoveWithoutStagingAtFourRanks) { column_halo_job(4); }
TEST(P2P, RendezvousSendToASymmetricBufferCopiesNothingAtTwoRanks) { rendezvous_job(2); }
TEST(P2P, RendezvousSendToASymmetricBufferCopiesNothingAtFourRanks) { rendezvous_job(4); }
TEST(P2P, RingAllBufferKindsAtTwoRanks) { ring_job(2); }
TEST(P2P, RingAllBufferKindsAtThreeRanks) { ring_job(3); }
TEST(P2P, RingAllBufferKindsAtFourRanks) { ring_job(4); }

TEST(P2P, PairwiseExchangeAtFourRanks) {
  auto r = run_job(4, [] {
    init();
    auto& g = world();
    const int me = g.rank(), peer = me ^ 1;
    for (int msg = 0; msg < 4; ++msg) {
      Tensor x = make(msg & 1, {4096}, g), y = make(msg & 2, {4096}, g);
      fill(x, me, msg);
      auto s = isend(g, x, peer, msg);
      auto rv = irecv(g, y, peer, msg);
      s.wait();
      rv.wait();
      expect(y, peer, msg, "pairwise");
      g.barrier();
    }
    return 0;
  });
  SF_EXPECT_JOB_OK(r);
}

// Views as send and receive buffers: slice with a step, a transpose, a row and a
// column of a matrix; the rest of each base stays untouched.
TEST(P2P, ViewsAsSendAndReceiveBuffers) {
  auto r = run_job(2, [] {
    init();
    auto& g = world();
    const int me = g.rank(), peer = 1 - me;
    for (bool sym : {false, true}) {
      // Sources: a strided slice, a transpose, a row, a column.
      Tensor sbase = make(sym, {8, 6}, g), vbase = make(sym, {64}, g);
      fill(sbase, me, 1);
      fill(vbase, me, 2);
      Tensor s_step = vbase.as_strided({16}, {3}, 2);    // vbase[2:50:3]
      Tensor s_tr = sbase.as_strided({6, 8}, {1, 6}, 0);  // sbase.T
      Tensor s_row = sbase.as_strided({6}, {1}, 18);      // sbase[3]
      Tensor s_col = sbase.as_strided({8}, {6}, 4);       // sbase[:, 4]
      // Destinations, views of bases filled with a sentinel.
      Tensor dbase = make(!sym, {8, 6}, g), dvec = make(!sym, {64}, g), dmat = make(sym, {8, 6}, g);
      Tensor dmat2 = make(!sym, {8, 6}, g);
      fill_const(dbase, -7);
      fill_const(dvec, -7);
      fill_const(dmat, -7);
      fill_const(dmat2, -7);
      Tensor d_step = dvec.as_strided({16}, {4}, 1);     // dvec[1:64:4]
      Tensor d_tr = dbase.as_strided({6, 8}, {1, 6}, 0);  // dbase.T
      Tensor d_row = dmat.as_strided({6}, {1}, 30);       // dmat[5] (symmetric contiguous view)
      Tensor d_col = dmat2.as_strided({8}, {6}, 1);       // dmat2[:, 1]
      g.barrier();
      auto w = batch_isend_irecv(g, {P2POp::send(s_step, peer, 1), P2POp::send(s_tr, peer, 2),
                                     P2POp::send(s_row, peer, 3), P2POp::send(s_col, peer, 4),
                                     P2POp::recv(d_step, peer, 1), P2POp::recv(d_tr, peer, 2),
                                     P2POp::recv(d_row, peer, 3), P2POp::recv(d_col, peer, 4)});
      for (auto& x : w) x.wait();
      // Rebuild the peer's sources locally to know what must have arrived.
      Tensor pb = make(false, {8, 6}, g), pv = make(false, {64}, g);
      fill(pb, peer, 1);
      fill(pv, peer, 2);
      auto same = [&](const Tensor& got, const Tensor& want, const char* what) {
        std::vector<float> a, b;
        for_each(got, [&](int64_t, float& x) { a.push_back(x); });
        for_each(want, [&](int64_t, float& x) { b.push_back(x); });
        SF_CHECK(a == b, "{} (sym={}): received values differ", what, sym);
      };
      same(d_step, pv.as_strided({16}, {3}, 2), "slice with step");
      same(d_tr, pb.as_strided({6, 8}, {1, 6}, 0), "transpose");
      same(d_row, pb.as_strided({6}, {1}, 18), "row");
      same(d_col, pb.as_strided({8}, {6}, 4), "column");
      // Untouched elsewhere.
      float* v = static_cast<float*>(dvec.data_ptr());
      for (int i = 0; i < 64; ++i)
        if (!(i >= 1 && (i - 1) % 4 == 0)) SF_CHECK(v[i] == -7, "dvec[{}] overwritten: {}", i, v[i]);
      float* m = static_cast<float*>(dmat.data_ptr());
      float* m2 = static_cast<float*>(dmat2.data_ptr());
      for (int i = 0; i < 48; ++i) {
        if (!(i >= 30 && i < 36)) SF_CHECK(m[i] == -7, "dmat[{}] overwritten: {}", i, m[i]);
        if (i % 6 != 1) SF_CHECK(m2[i] == -7, "dmat2[{}] overwritten: {}", i, m2[i]);
      }
      // The sources were not modified.
      expect(sbase, me, 1, "send base");
      g.barrier();
    }
    return 0;
  });
  SF_EXPECT_JOB_OK(r);
}

// Tags are independent queues; within a tag, program order.
TEST(P2P, TagsInterleavedAndOutOfOrder) {
  auto r = run_job(2, [] {
    init();
    auto& g = world();
    const int me = g.rank();
    constexpr int kTags = 3, kPerTag = 4;
    // Buffers: the same symmetric allocations on both ranks (collective), then
    // each rank uses its own. Buffer (t, k): symmetric when (k + t) is odd.
    std::vector<Tensor> bufs;
    for (int t = 0; t < kTags; ++t)
      for (int k = 0; k < kPerTag; ++k) bufs.push_back(make((k + t) % 2, {256 + 64 * t}, g));
    auto buf = [&](int t, int k) { return bufs[size_t(t * kPerTag + k)]; };
    // Receiver: regular when the sender's is symmetric and vice versa, half the time.
    std::vector<Tensor> rbufs;
    for (int t = 0; t < kTags; ++t)
      for (int k = 0; k < kPerTag; ++k) rbufs.push_back(make(k % 2 == 0, {256 + 64 * t}, g));
    if (me == 0) {
      std::vector<Work> ws;
      for (int k = 0; k < kPerTag; ++k)
        for (int t = 0; t < kTags; ++t) {  // tag-interleaved: t0 t1 t2 t0 t1 t2 ...
          fill(buf(t, k), 0, 10 * t + k);
          ws.push_back(isend(g, buf(t, k), 1, t));
        }
      std::reverse(ws.begin(), ws.end());  // wait in a different order
      for (auto& w : ws) w.wait();
    } else {
      std::vector<Work> ws;
      std::vector<std::pair<int, int>> ids;
      for (int t = kTags - 1; t >= 0; --t)  // posted tag by tag, last tag first
        for (int k = 0; k < kPerTag; ++k) {
          ids.push_back({t, k});
          ws.push_back(irecv(g, rbufs[size_t(t * kPerTag + k)], 0, t));
        }
      for (size_t i = 0; i < ws.size(); ++i) {
        ws[i].wait();
        auto [t, k] = ids[i];
        expect(rbufs[size_t(t * kPerTag + k)], 0, 10 * t + k, "tagged");
      }
    }
    g.barrier();
    return 0;
  });
  SF_EXPECT_JOB_OK(r);
}

// More messages in flight to one peer than the control ring holds (256).
TEST(P2P, ManyMessagesInFlightToOnePeer) {
  auto r = run_job(2, [] {
    init();
    auto& g = world();
    const int me = g.rank(), peer = 1 - me;
    constexpr int kMsgs = 1500;
    std::vector<Tensor> bufs;
    std::vector<Work> ws;
    Tensor big = make(true, {kMsgs, 16}, g);  // rows: symmetric contiguous views
    for (int i = 0; i < kMsgs; ++i) {
      Tensor t = (i % 3 == 0) ? big.as_strided({16}, {1}, 16 * i) : make(false, {16}, g);
      if (me == 0) fill(t, 0, i);
      bufs.push_back(t);
      ws.push_back(me == 0 ? isend(g, t, peer, i % 5) : irecv(g, t, peer, i % 5));
    }
    for (int i = kMsgs - 1; i >= 0; --i) ws[size_t(i)].wait();
    if (me == 1)
      for (int i = 0; i < kMsgs; ++i) expect(bufs[size_t(i)], 0, i, "in flight");
    g.barrier();
    return 0;
  });
  SF_EXPECT_JOB_OK(r);
}

TEST(P2P, SelfSend) {
  auto r = run_job(2, [] {
    init();
    auto& g = world();
    const int me = g.rank();
    int msg = 0;
    for (bool ss : {false, true})
      for (bool rs : {false, true})
        for (int64_t n : {int64_t(0), int64_t(7), int64_t(3 << 18)}) {  // 0 B, 28 B, 3 MiB
          Tensor x = make(ss, {n}, g), y = make(rs, {n}, g);
          fill(x, me, ++msg);
          auto w = batch_isend_irecv(g, {P2POp::send(x, me, 5), P2POp::recv(y, me, 5)});
          w[1].wait();
          w[0].wait();
          expect(y, me, msg, "self");
        }
    g.barrier();
    return 0;
  });
  SF_EXPECT_JOB_OK(r);
}

// 3 MiB (and an odd size) through the 2 x 256 KiB mailbox, contiguous and not.
TEST(P2P, LargeMessagesThroughTheChunkedMailbox) {
  auto r = run_job(2, [] {
    init();
    auto& g = world();
    const int me = g.rank(), peer = 1 - me;
    struct Case { Shape base; Shape sizes, strides; };
    std::vector<Case> cases = {
        {{3 << 18}, {3 << 18}, {1}},                     // 3 MiB contiguous
        {{(3 << 18) + 3}, {(3 << 18) + 3}, {1}},         // 3 MiB + 12 B
        {{1024, 768}, {768, 1024}, {1, 768}},            // 3 MiB transposed
    };
    int msg = 0;
    for (auto& c : cases) {
      ++msg;
      Tensor xb = make(false, c.base, g), yb = make(false, c.base, g);
      Tensor x = xb.as_strided(c.sizes, c.strides, 0), y = yb.as_strided(c.sizes, c.strides, 0);
      fill(x, me, msg);
      reset_staged_copy_stats();
      auto w = batch_isend_irecv(g, {P2POp::send(x, peer), P2POp::recv(y, peer)});
      w[0].wait();
      w[1].wait();
      expect(y, peer, msg, "large");
      auto cs = staged_copy_stats();
      SF_CHECK(cs.count == 2 && cs.bytes == 2 * x.nbytes(), "staged copies {} bytes {}, expected 2, {}",
               cs.count, cs.bytes, 2 * x.nbytes());
    }
    g.barrier();
    return 0;
  });
  SF_EXPECT_JOB_OK(r);
}

TEST(P2P, ZeroSizeMessages) {
  auto r = run_job(3, [] {
    init();
    auto& g = world();
    const int me = g.rank(), n = g.size();
    for (bool ss : {false, true})
      for (bool rs : {false, true}) {
        Tensor x = make(ss, {0}, g), y = make(rs, {4, 0}, g);
        auto w = batch_isend_irecv(g, {P2POp::send(x, (me + 1) % n, 2),
                                       P2POp::recv(y, (me + n - 1) % n, 2)});
        for (auto& k : w) k.wait();
        g.barrier();
      }
    Work done;  // a default Work is complete
    SF_CHECK(done.is_completed(), "default Work");
    done.wait();
    return 0;
  });
  SF_EXPECT_JOB_OK(r);
}

TEST(P2P, StagedPathCountsCopiesSymmetricPutCountsNone) {
  auto r = run_job(2, [] {
    init();
    auto& g = world();
    const int me = g.rank(), peer = 1 - me;
    Tensor xs = make(true, {4096}, g), ys = make(true, {4096}, g);
    Tensor xr = make(false, {4096}, g), yr = make(false, {4096}, g);
    fill(xs, me);
    fill(xr, me);
    reset_staged_copy_stats();
    for (auto& w : batch_isend_irecv(g, {P2POp::send(xs, peer), P2POp::recv(ys, peer)})) w.wait();
    SF_CHECK(staged_copy_stats().count == 0, "symmetric put counted {}", staged_copy_stats().count);
    for (auto& w : batch_isend_irecv(g, {P2POp::send(xr, peer), P2POp::recv(ys, peer)})) w.wait();
    SF_CHECK(staged_copy_stats().count == 0, "regular -> symmetric put counted {}",
             staged_copy_stats().count);
    for (auto& w : batch_isend_irecv(g, {P2POp::send(xs, peer), P2POp::recv(yr, peer)})) w.wait();
    SF_CHECK(staged_copy_stats().count == 0, "receiver read from symmetric counted {}",
             staged_copy_stats().count);
    for (auto& w : batch_isend_irecv(g, {P2POp::send(xr, peer), P2POp::recv(yr, peer)})) w.wait();
    auto cs = staged_copy_stats();
    SF_CHECK(cs.count == 2 && cs.bytes == 2 * 4096 * 4, "staged: {} copies, {} bytes", cs.count, cs.bytes);
    expect(yr, peer, 0, "staged");
    g.barrier();
    return 0;
  });
  SF_EXPECT_JOB_OK(r);
}

// 8 KiB: rendezvous (an eager send would complete at once).
TEST(P2P, IsCompletedPolling) {
  auto r = run_job(2, [] {
    init();
    auto& g = world();
    Tensor x = make(false, {2048}, g);
    g.barrier();  // rank 1 posts its receive 50 ms after this
    if (g.rank() == 0) {
      fill(x, 0);
      auto w = isend(g, x, 1);
      long polls = 0;
      while (!w.is_completed()) {
        ++polls;
        usleep(100);
      }
      SF_CHECK(polls > 10, "receiver posts 50 ms late, yet only {} polls", polls);
      w.wait();
    } else {
      usleep(50000);
      auto w = irecv(g, x, 0);
      while (!w.is_completed()) usleep(100);
      w.wait();
      expect(x, 0, 0, "polled");
    }
    g.barrier();
    return 0;
  });
  SF_EXPECT_JOB_OK(r);
}

// Rank 0 waits on its send before it posts its receive; rank 1 posts both and
// waits on its send first. Rank 0's send may need rank 1 to read it (regular
// receive buffer, symmetric send buffer): rank 1's wait drives that.
TEST(P2P, WaitOnSendBeforePostingReceive) {
  auto r = run_job(2, [] {
    init();
    auto& g = world();
    const int me = g.rank(), peer = 1 - me;
    int msg = 0;
    for (bool ss : {false, true})
      for (bool rs : {false, true}) {
        Tensor x = make(ss, {100000}, g), y = make(rs, {100000}, g);
        fill(x, me, ++msg);
        g.barrier();
        if (me == 0) {
          isend(g, x, peer).wait();
          irecv(g, y, peer).wait();
        } else {
          auto w = batch_isend_irecv(g, {P2POp::send(x, peer), P2POp::recv(y, peer)});
          w[0].wait();
          w[1].wait();
        }
        expect(y, peer, msg, "send first");
        g.barrier();
      }
    return 0;
  });
  SF_EXPECT_JOB_OK(r);
}

// P2P in a subgroup: group ranks, its own heap; a symmetric tensor of another
// group (world) counts as regular memory there. World traffic runs alongside.
TEST(P2P, SubgroupAndWorldSideBySide) {
  auto r = run_job(4, [] {
    init();
    auto& w = world();
    ProcessGroup* odd = new_group({1, 3}, "odd");
    Tensor wx = make(true, {2048}, w), wy = make(true, {2048}, w);  // world-symmetric
    const int me = w.rank();
    fill(wx, me, 1);
    std::vector<Work> works;
    Tensor sx, sy;
    if (odd) {
      SF_CHECK(odd->size() == 2 && odd->rank() == (me == 3), "odd group ranks");
      sx = symm::empty({2048}, DType::f32, *odd);
      sy = symm::empty({2048}, DType::f32, *odd);
      fill(sx, odd->rank(), 2);
      int peer = 1 - odd->rank();
      reset_staged_copy_stats();
      // world-symmetric buffers are regular memory for group "odd": staged path.
      works = batch_isend_irecv(*odd, {P2POp::send(wx, peer, 1), P2POp::recv(wy, peer, 1),
                                       P2POp::send(sx, peer, 2), P2POp::recv(sy, peer, 2)});
      for (auto& k : works) k.wait();
      expect(wy, me == 1 ? 3 : 1, 1, "subgroup, world-symmetric buffers");
      expect(sy, peer, 2, "subgroup, own symmetric buffers");
      SF_CHECK(staged_copy_stats().count == 2, "expected 2 staged copies, got {}",
               staged_copy_stats().count);
    }
    // World ring at the same time.
    Tensor a = make(false, {512}, w), b = make(false, {512}, w);
    fill(a, me, 3);
    for (auto& k : batch_isend_irecv(w, {P2POp::send(a, (me + 1) % 4), P2POp::recv(b, (me + 3) % 4)}))
      k.wait();
    expect(b, (me + 3) % 4, 3, "world ring");
    w.barrier();
    return 0;
  });
  SF_EXPECT_JOB_OK(r);
}

// A rendezvous send completes only once its receive is posted and matched: if
// both ranks wait on their send before posting the receive, that is a
// deadlock, reported by the deadline with what each side waits for. An eager
// send (256 bytes) completes at once, like MPI's, but only while the pair has
// free eager slots: the send after kEagerSlots unreceived ones waits for its
// post like a large one, and deadlocks the same way. 64 KiB always rendezvous.
TEST(P2P, BothWaitingOnSendBeforeReceiveTimesOutClearly) {
  auto r = run_job(2, [] {
    init();
    auto& g = world();
    const int me = g.rank(), peer = 1 - me;
    std::vector<Tensor> bufs;
    for (int64_t floats : {int64_t(64), int64_t(16384)})
      for (int k = 0; k < 2; ++k) bufs.push_back(make(true, {floats}, g));
    for (int64_t floats : {int64_t(64), int64_t(16384)}) {
      Tensor x = bufs[floats == 64 ? 0 : 2], y = bufs[floats == 64 ? 1 : 3];
      const int tag = floats == 64 ? 4 : 5;
      // Eager sends that complete without any receive: every slot of the pair.
      const int eager = floats == 64 ? runtime::kEagerSlots : 0;
      for (int i = 0; i < eager; ++i) isend(g, x, peer, tag).wait();
      const std::string state =
          fmt::format("send of {} bytes: rank {} has posted no matching receive", floats * 4, peer);
      set_timeout(0.3);
      Work send = isend(g, x, peer, tag);
      try {
        send.wait();
        return 1;
      } catch (const TimeoutError& e) {
        std::string msg = e.what();
        SF_CHECK(msg.find(fmt::format("in isend tag {} sequence {}: group 'world', rank {} waiting "
                                      "for rank {}: {}", tag, eager + 1, me, peer, state)) != std::string::npos,
                 "message: {}", msg);
      }
      set_timeout(30);
      g.signals().signal(peer, 20);  // both timed out before either posts its receive
      g.signals().wait_next(peer, 20, "both timed out");
      // The program can still finish the exchange. The send is waited for
      // before the barrier: a rank in a barrier makes no P2P progress, and the
      // peer's last receive may need this rank to see its post.
      for (int i = 0; i <= eager; ++i) irecv(g, y, peer, tag).wait();
      send.wait();
      g.barrier();
    }
    return 0;
  });
  SF_EXPECT_JOB_OK(r);
}

// Every rank sends to every rank (itself included), several tags, mixed kinds.
TEST(P2P, AllPairsAtFourRanks) {
  auto r = run_job(4, [] {
    init();
    auto& g = world();
    const int me = g.rank(), n = g.size();
    std::vector<Tensor> xs, ys;
    for (int p = 0; p < n; ++p)
      for (int t = 0; t < 2; ++t) {
        xs.push_back(make((p + t) % 2, {3000 + 1000 * t}, g));
        ys.push_back(make(t == 1, {3000 + 1000 * t}, g));
      }
    std::vector<P2POp> ops;
    for (int p = 0; p < n; ++p)
      for (int t = 0; t < 2; ++t) {
        fill(xs[size_t(2 * p + t)], me, 10 * p + t);
        ops.push_back(P2POp::send(xs[size_t(2 * p + t)], p, t));
        ops.push_back(P2POp::recv(ys[size_t(2 * p + t)], p, t));
      }
    auto w = batch_isend_irecv(g, ops);
    for (auto& k : w) k.wait();
    for (int p = 0; p < n; ++p)
      for (int t = 0; t < 2; ++t) expect(ys[size_t(2 * p + t)], p, 10 * me + t, "all pairs");
    g.barrier();
    return 0;
  });
  SF_EXPECT_JOB_OK(r);
}

TEST(P2P, SizeMismatchIsAnErrorOnBothSides) {
  auto r = run_job(2, [] {
    init();
    auto& g = world();
    const int me = g.rank(), peer = 1 - me;
    // 8 KiB: rendezvous (an eager send completes before the receiver looks).
    Tensor x = make(false, {2048}, g), y = make(true, {1024}, g);
    std::string msg;
    try {
      if (me == 0) isend(g, x, peer, 6).wait();
      else irecv(g, y, peer, 6).wait();
    } catch (const Error& e) {
      msg = e.what();
    }
    std::printf("%s\n", msg.c_str());
    if (me == 0)
      SF_CHECK(msg.find("isend size mismatch in group 'world': rank 0 sends 8192 bytes (f32[2048]) "
                        "to rank 1 with tag 6 (sequence 1), but rank 1 receives 4096 bytes") !=
                   std::string::npos, "message: {}", msg);
    else
      SF_CHECK(msg.find("irecv size mismatch in group 'world': rank 1 receives 4096 bytes (f32[1024]) "
                        "from rank 0 with tag 6 (sequence 1), but rank 0 sends 8192 bytes") !=
                   std::string::npos, "message: {}", msg);
    // The pair still works afterwards.
    Tensor a = make(false, {512}, g), b = make(false, {512}, g);
    fill(a, me);
    for (auto& w : batch_isend_irecv(g, {P2POp::send(a, peer, 6), P2POp::recv(b, peer, 6)})) w.wait();
    expect(b, peer, 0, "after mismatch");
    g.barrier();
    return 0;
  });
  SF_EXPECT_JOB_OK(r);
}

TEST(P2P, ReceiveWithoutSenderTimesOut) {
  auto r = run_job(2, [] {
    init();
    auto& g = world();
    Tensor y = make(false, {64}, g);
    if (g.rank() == 1) {
      set_timeout(0.3);
      auto t0 = Clock::now();
      try {
        irecv(g, y, 0, 9).wait();
      } catch (const TimeoutError& e) {
        double s = since(t0);
        std::string msg = e.what();
        std::printf("%s\n", e.what());
        SF_CHECK(s >= 0.3 && s < 2, "timed out after {} s", s);
        SF_CHECK(msg.find("timeout after 0.3 s in irecv tag 9 sequence 1: group 'world', rank 1 "
                          "waiting for rank 0: receive of 256 bytes posted") != std::string::npos,
                 "message: {}", msg);
        set_timeout(30);
        g.barrier("end");
        return 0;
      }
      return 1;
    }
    g.barrier("end");
    return 0;
  });
  SF_EXPECT_JOB_OK(r);
  EXPECT_NE(r.out.find("timeout after 0.3 s in irecv"), std::string::npos) << r.out;
}

// A peer is SIGKILLed while rank 0 waits for its message and rank 1 waits for
// it to post a receive: both fail with PeerFailure within 5 s.
TEST(P2P, KilledPeerIsAPeerFailure) {
  auto r = run_job(3, [] {
    init();
    auto& g = world();
    Tensor buf = make(false, {1 << 16}, g);
    g.barrier("start");
    if (g.rank() == 2) {
      usleep(300000);
      raise(SIGKILL);
    }
    auto t0 = Clock::now();
    try {
      if (g.rank() == 0) irecv(g, buf, 2, 1).wait();
      else isend(g, buf, 2, 1).wait();
    } catch (const PeerFailure& e) {
      double s = since(t0);
      std::printf("after %.2f s: %s\n", s, e.what());
      SF_CHECK(s < 5, "PeerFailure took {} s", s);
      return 3;
    }
    return 0;
  }, [](runtime::LaunchOptions& o) { o.env.push_back({"SYMMFLOW_TIMEOUT", "60"}); });
  EXPECT_EQ(r.rc, 128 + SIGKILL) << r.out << r.err;
  EXPECT_EQ(r.report.first_failed_rank, 2);
  EXPECT_LT(r.seconds, 5);
  for (int k = 0; k < 2; ++k) EXPECT_EQ(r.report.status[size_t(k)], 3) << r.out << r.err;
  EXPECT_NE(r.out.find("peer failure in irecv tag 1 sequence 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("peer failure in isend tag 1 sequence 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("killed by signal 9"), std::string::npos) << r.out;
  runtime::testing::expect_clean(r);
  std::printf("%s", r.out.c_str());
}

TEST(P2P, TenThousandPingPongsKeepHeapAndRssFlat) {
  auto r = run_job(2, [] {
    init();
    auto& g = world();
    const int me = g.rank(), peer = 1 - me;
    Tensor s = make(true, {256}, g), rr = make(true, {256}, g);
    Tensor s2 = make(false, {256}, g), r2 = make(false, {256}, g);
    const size_t heap0 = g.heap().bytes_in_use();
    long rss0 = 0, rss_mid = 0;
    for (int i = 0; i < 10000; ++i) {
      if (i == 2000) rss0 = rss_kib();
      if (i == 6000) rss_mid = rss_kib();
      bool staged = i % 4 == 3;
      Tensor& out = staged ? s2 : s;
      Tensor& in = staged ? r2 : rr;
      if (me == 0) {
        static_cast<float*>(out.data_ptr())[0] = float(i);
        isend(g, out, peer, i % 7).wait();
        irecv(g, in, peer, i % 7).wait();
      } else {
        irecv(g, in, peer, i % 7).wait();
        static_cast<float*>(out.data_ptr())[0] = static_cast<float*>(in.data_ptr())[0] + 1;
        isend(g, out, peer, i % 7).wait();
      }
      if (me == 0) {
        float v = static_cast<float*>(in.data_ptr())[0];
        SF_CHECK(v == float(i + 1), "ping-pong {}: got {}", i, v);
      }
    }
    long rss1 = rss_kib();
    std::printf("rank %d: heap %zu -> %zu bytes, RSS %ld -> %ld -> %ld KiB\n", me, heap0,
                g.heap().bytes_in_use(), rss0, rss_mid, rss1);
    SF_CHECK(g.heap().bytes_in_use() == heap0, "heap grew");
    // 8000 round trips: a leak of 8 B per round trip would show as 64 KiB.
    // Not under ASan: its quarantine holds freed memory instead of reusing it
    // (RSS grows by design); LeakSanitizer checks for leaks there instead.
#if !defined(__SANITIZE_ADDRESS__)
    SF_CHECK(rss1 - rss0 < 64, "RSS (anon + shmem) grew: {} -> {} -> {} KiB", rss0, rss_mid, rss1);
#endif
    g.barrier();
    return 0;
  });
  SF_EXPECT_JOB_OK(r);
  std::printf("%s", r.out.c_str());
}

// --- Eager sends (p2p/eager.cc): small messages go before the receive is posted.
// The signal pad orders the ranks without driving P2P progress, so what each
// rank has seen of the other's events is known.

constexpr int kSync = 30;  // signal channel of these tests
void tell(ProcessGroup& g, int peer) { g.signals().signal(peer, kSync); }
void hear(ProcessGroup& g, int peer, const char* what) { g.signals().wait_next(peer, kSync, what); }

// Ring (send to next, receive from prev) of small messages sent before the
// receive is posted: each is in the receiver's slot before its receive exists.
// The sender's copy into the slot is counted at isend, the receiver's copy out
// at irecv; nothing else is copied.
void eager_before_recv_job(int nproc) {
  auto r = run_job(nproc, [] {
    init();
    auto& g = world();
    const int me = g.rank(), n = g.size(), next = (me + 1) % n, prev = (me + n - 1) % n;
    for (bool sym : {false, true}) {
      Tensor x = make(sym, {256}, g), y = make(sym, {256}, g);
      fill(x, me, 1);
      fill_const(y, -1);
      g.barrier();
      reset_staged_copy_stats();
      auto s = isend(g, x, next, 7);
      SF_CHECK(staged_copy_stats().count == 1 && staged_copy_stats().bytes == 1024,
               "sym={}: eager send copied {} times ({} bytes), expected once, 1024", sym,
               staged_copy_stats().count, staged_copy_stats().bytes);
      fill_const(x, -2);  // the message is in the slot already
      tell(g, next);
      hear(g, prev, "eager message sent");
      auto rv = irecv(g, y, prev, 7);
      SF_CHECK(rv.is_completed(), "an eager message that is there completes its receive at once");
      rv.wait();
      s.wait();
      expect(y, prev, 1, "eager before receive");
      auto cs = staged_copy_stats();
      SF_CHECK(cs.count == 2 && cs.bytes == 2048, "sym={}: {} copies ({} bytes), expected 2 (2048)",
               sym, cs.count, cs.bytes);
      g.barrier();
    }
    return 0;
  });
  SF_EXPECT_JOB_OK(r);
}
TEST(P2PEager, SendBeforeReceiveIsPostedAtTwoRanks) { eager_before_recv_job(2); }
TEST(P2PEager, SendBeforeReceiveIsPostedAtThreeRanks) { eager_before_recv_job(3); }
TEST(P2PEager, SendBeforeReceiveIsPostedAtFourRanks) { eager_before_recv_job(4); }

// The receive is posted while the eager message is on its way (the receiver
// has not consumed it): the post crosses the message, the sender drops it, the
// receiver matches the message to the posted receive. And a receive posted
// before the send that the sender sees: rendezvous, nothing eager.
void eager_crossing_job(int nproc) {
  auto r = run_job(nproc, [] {
    init();
    auto& g = world();
    const int me = g.rank(), n = g.size(), next = (me + 1) % n, prev = (me + n - 1) % n;
    Tensor x = make(false, {300}, g), y = make(false, {300}, g);
    Tensor ys = make(true, {300}, g);
    fill(x, me, 2);
    g.barrier();
    // 1. Crossing: my send to next is in its ring when next posts.
    auto s = isend(g, x, next, 3);
    tell(g, next);
    hear(g, prev, "message on its way");
    auto rv = irecv(g, y, prev, 3);  // posts first, then consumes the message
    rv.wait();
    s.wait();
    expect(y, prev, 2, "crossing");
    g.barrier();
    // 2. Posted first and seen by the sender: a put into the symmetric buffer.
    fill_const(ys, -1);
    auto rv2 = irecv(g, ys, prev, 4);
    tell(g, prev);
    hear(g, next, "receive posted");
    reset_staged_copy_stats();
    isend(g, x, next, 4).wait();  // completes at once: put straight into next's buffer
    rv2.wait();
    expect(ys, prev, 2, "posted first");
    SF_CHECK(staged_copy_stats().count == 0, "posted first: {} copies, expected none (put)",
             staged_copy_stats().count);
    g.barrier();
    return 0;
  });
  SF_EXPECT_JOB_OK(r);
}
TEST(P2PEager, ReceivePostedWhileMessageTravelsAtTwoRanks) { eager_crossing_job(2); }
TEST(P2PEager, ReceivePostedWhileMessageTravelsAtThreeRanks) { eager_crossing_job(3); }
TEST(P2PEager, ReceivePostedWhileMessageTravelsAtFourRanks) { eager_crossing_job(4); }

// More small messages in flight than the pair has eager slots: the first
// kEagerSlots go eager, the rest wait for their posts (rendezvous), nothing
// blocks. Mixed tags, received in another order than sent; strided views,
// symmetric and regular buffers.
void eager_overflow_job(int nproc) {
  auto r = run_job(nproc, [] {
    init();
    auto& g = world();
    const int me = g.rank(), n = g.size(), next = (me + 1) % n, prev = (me + n - 1) % n;
    constexpr int kMsgs = 3 * runtime::kEagerSlots, kTags = 3;
    Tensor sbase = make(true, {kMsgs, 64}, g), rbase = make(false, {kMsgs, 64}, g);
    std::vector<Tensor> xs, ys;
    for (int i = 0; i < kMsgs; ++i) {
      switch (i % 4) {
        case 0: xs.push_back(make(false, {50}, g)); break;                     // regular
        case 1: xs.push_back(sbase.as_strided({64}, {1}, 64 * i)); break;      // symmetric row
        case 2: xs.push_back(sbase.as_strided({32, 2}, {1, 32}, 64 * i)); break;  // transposed
        default: xs.push_back(make(false, {2, 25}, g).as_strided({25, 2}, {1, 25}, 0));
      }
      fill(xs.back(), me, i);
      int64_t numel = xs.back().numel();
      // Receive buffers: a strided column of rbase when the element count fits.
      ys.push_back(i % 3 == 0 && numel <= kMsgs ? rbase.as_strided({numel}, {64}, i % 64)
                                                 : make(i % 2 == 0, {numel}, g));
    }
    g.barrier();
    reset_staged_copy_stats();
    std::vector<Work> sends;
    for (int i = 0; i < kMsgs; ++i) sends.push_back(isend(g, xs[size_t(i)], next, i % kTags));
    // Only kEagerSlots fit (the first ones: those sends completed when their
    // data was in the slot); the others wait for posts.
    const uint64_t eager = staged_copy_stats().count;
    SF_CHECK(eager == uint64_t(runtime::kEagerSlots), "{} eager copies, expected {}", eager,
             runtime::kEagerSlots);
    for (int i = 0; i < kMsgs; ++i)
      SF_CHECK(sends[size_t(i)].is_completed() == (i < runtime::kEagerSlots),
               "send {}: completed {} before any receive, expected {}", i,
               sends[size_t(i)].is_completed(), i < runtime::kEagerSlots);
    tell(g, next);
    hear(g, prev, "all sent");
    // Receive tag by tag, last tag first; within a tag in order.
    std::vector<std::pair<int, Work>> recvs;
    for (int t = kTags - 1; t >= 0; --t)
      for (int i = t; i < kMsgs; i += kTags) recvs.emplace_back(i, irecv(g, ys[size_t(i)], prev, t));
    for (auto& [i, w] : recvs) {
      w.wait();
      std::vector<float> got, want;
      for_each(ys[size_t(i)], [&](int64_t, float& v) { got.push_back(v); });
      Tensor ref = make(false, xs[size_t(i)].sizes(), g);
      fill(ref, prev, i);
      for_each(ref, [&](int64_t, float& v) { want.push_back(v); });
      SF_CHECK(got == want, "message {} (tag {}) differs", i, i % kTags);
    }
    for (auto& s : sends) s.wait();
    g.barrier();
    return 0;
  });
  SF_EXPECT_JOB_OK(r);
}
TEST(P2PEager, MoreMessagesThanSlotsFallBackAtTwoRanks) { eager_overflow_job(2); }
TEST(P2PEager, MoreMessagesThanSlotsFallBackAtThreeRanks) { eager_overflow_job(3); }
TEST(P2PEager, MoreMessagesThanSlotsFallBackAtFourRanks) { eager_overflow_job(4); }

// An eager message whose receive is smaller: the receive fails with the same
// message as on the rendezvous paths; the send completed when its data was in
// the slot, so it learns nothing (as with MPI). The pair still works afterwards,
// and a rendezvous mismatch still fails both sides (SizeMismatchIsAnErrorOnBothSides).
void eager_size_mismatch_job(int nproc) {
  auto r = run_job(nproc, [] {
    init();
    auto& g = world();
    const int me = g.rank(), n = g.size(), next = (me + 1) % n, prev = (me + n - 1) % n;
    Tensor x = make(false, {256}, g), y = make(true, {128}, g);
    auto s = isend(g, x, next, 6);  // eager: next has posted nothing
    SF_CHECK(s.is_completed(), "an eager send completes when its data is in the slot");
    tell(g, next);
    hear(g, prev, "sent");
    std::string send_msg, recv_msg;
    try {
      irecv(g, y, prev, 6).wait();
    } catch (const Error& e) {
      recv_msg = e.what();
    }
    try {
      s.wait();
    } catch (const Error& e) {
      send_msg = e.what();
    }
    SF_CHECK(recv_msg.find(fmt::format("irecv size mismatch in group 'world': rank {} receives 512 "
                                       "bytes (f32[128]) from rank {} with tag 6 (sequence 1), but "
                                       "rank {} sends 1024 bytes", me, prev, prev)) != std::string::npos,
             "receiver's message: {}", recv_msg);
    SF_CHECK(send_msg.empty(), "an eager send completed at isend, yet its wait failed: {}", send_msg);
    Tensor a = make(false, {128}, g);
    fill(a, me);
    for (auto& w : batch_isend_irecv(g, {P2POp::send(a, next, 6), P2POp::recv(y, prev, 6)})) w.wait();
    expect(y, prev, 0, "after mismatch");
    g.barrier();
    return 0;
  });
  SF_EXPECT_JOB_OK(r);
}
TEST(P2PEager, SizeMismatchFailsTheReceiveAtTwoRanks) { eager_size_mismatch_job(2); }
TEST(P2PEager, SizeMismatchFailsTheReceiveAtThreeRanks) { eager_size_mismatch_job(3); }
TEST(P2PEager, SizeMismatchFailsTheReceiveAtFourRanks) { eager_size_mismatch_job(4); }

// Self-send of small messages before the receive: eager through the rank's own
// pair block; a strided destination; more than the slots.
TEST(P2PEager, SelfSendBeforeReceive) {
  auto r = run_job(2, [] {
    init();
    auto& g = world();
    const int me = g.rank();
    constexpr int kMsgs = runtime::kEagerSlots + 5;
    std::vector<Tensor> xs, ys;
    std::vector<Work> sends;
    reset_staged_copy_stats();
    for (int i = 0; i < kMsgs; ++i) {
      xs.push_back(make(i % 2 == 0, {100}, g));
      fill(xs.back(), me, i);
      sends.push_back(isend(g, xs.back(), me, 1));
    }
    SF_CHECK(staged_copy_stats().count == uint64_t(runtime::kEagerSlots), "{} eager copies",
             staged_copy_stats().count);
    for (int i = 0; i < kMsgs; ++i) {
      ys.push_back(make(false, {200}, g).as_strided({100}, {2}, 1));
      irecv(g, ys.back(), me, 1).wait();
      expect(ys.back(), me, i, "self eager");
    }
    for (auto& s : sends) s.wait();
    g.barrier();
    return 0;
  });
  SF_EXPECT_JOB_OK(r);
}

}  // namespace
}  // namespace symmflow::dist
