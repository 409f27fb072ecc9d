// The c10d:: and symm_mem:: ops through the dispatcher, in real multi-rank jobs:
// functional results, in-place aliases, P2P with wait_tensor, and the eager
// symmetric-memory check driven by the registry.
#include <gtest/gtest.h>

#include "symmflow/kernels/copy.h"
#include "symmflow/kernels/factories.h"
#include "symmflow/library/dispatcher.h"
#include "symmflow/ops/work_registry.h"
#include "symmflow/runtime/copy_stats.h"
#include "symmflow/runtime/symm.h"
#include "symmflow/runtime/test_util.h"
#include "symmflow/runtime/world.h"

namespace symmflow {
namespace {

using runtime::testing::run_job;

IValue call1(std::string_view name, std::vector<IValue> args, Kwargs kw = {}) {
  OpContext ctx(DispatchKey::CPU);
  auto r = Dispatcher::instance().call(name, ctx, args, kw);
  return r.empty() ? IValue() : r[0];
}

Tensor iota_plus(int64_t n, float base) {
  Tensor t = Tensor::empty({n}, DType::f32);
  for (int64_t i = 0; i < n; ++i) t.data<float>()[i] = base + float(i);
  return t;
}

class C10dOpsAtRanks : public ::testing::TestWithParam<int> {};

TEST_P(C10dOpsAtRanks, CollectivesThroughTheDispatcher) {
  auto r = run_job(GetParam(), [] {
    dist::init();
    const int W = dist::world().size(), me = dist::world().rank();
    // Functional all_reduce: a new tensor; the input is untouched.
    Tensor x = iota_plus(10, float(me));
    Tensor y = call1("c10d::all_reduce", {x, "sum", "world"}).to_tensor();
    y = call1("c10d::wait_tensor", {y}).to_tensor();
    SF_CHECK(!y.is_same(x) && x.data<float>()[0] == float(me), "all_reduce touched its input");
    for (int i = 0; i < 10; ++i)
      SF_CHECK(y.data<float>()[i] == float(W * i + W * (W - 1) / 2), "all_reduce[{}] = {}", i, y.data<float>()[i]);
    // In place: returns the same tensor, as its schema's alias says.
    Tensor z = iota_plus(7, 1.0f);
    SF_CHECK(call1("c10d::all_reduce_", {z, "max", "world"}).to_tensor().is_same(z), "all_reduce_ alias");
    // all_gather / reduce_scatter with group_size checked against the group.
    Tensor row = iota_plus(3, float(10 * me));
    Tensor g = call1("c10d::all_gather_into_tensor", {row, W, "world"}).to_tensor();
    SF_CHECK(g.numel() == 3 * W && g.data<float>()[3 * (W - 1)] == float(10 * (W - 1)), "all_gather");
    bool threw = false;
    try { call1("c10d::all_gather_into_tensor", {row, W + 1, "world"}); } catch (const Error&) { threw = true; }
    SF_CHECK(threw, "group_size mismatch accepted");
    Tensor rs = call1("c10d::reduce_scatter_tensor", {iota_plus(2 * W, 0.0f), "sum", W, "world"}).to_tensor();
    SF_CHECK(rs.numel() == 2 && rs.data<float>()[0] == float(W * 2 * me), "reduce_scatter {}", rs.data<float>()[0]);
    // Broadcast from the last rank, functional and in place.
    Tensor b = iota_plus(5, float(me));
    Tensor bf = call1("c10d::broadcast", {b, W - 1, "world"}).to_tensor();
    SF_CHECK(bf.data<float>()[0] == float(W - 1) && b.data<float>()[0] == float(me), "broadcast");
    call1("c10d::broadcast_", {b, 0, "world"});
    SF_CHECK(b.data<float>()[4] == 4.0f, "broadcast_");
    // all_to_all_single with equal splits: row j of rank i goes to rank j.
    Tensor a2a = iota_plus(W, float(100 * me));
    Tensor got = call1("c10d::all_to_all_single", {a2a, std::vector<int64_t>{}, std::vector<int64_t>{}, "world"}).to_tensor();
    for (int i = 0; i < W; ++i) SF_CHECK(got.data<float>()[i] == float(100 * i + me), "all_to_all[{}]", i);
    return 0;
  });
  SF_EXPECT_JOB_OK(r);
}

TEST_P(C10dOpsAtRanks, RingThroughBatchIsendIrecvAndWaitTensor) {
  auto r = run_job(GetParam(), [] {
    dist::init();
    const int W = dist::world().size(), me = dist::world().rank();
    const int64_t nxt = (me + 1) % W, prv = (me - 1 + W) % W;
    Tensor base = kernels::zeros({4, 8});
    Tensor send = iota_plus(8, float(me * 100));
    Tensor recv_row = call1("aten::select", {base, 0, 2}).to_tensor();  // receive into a view
    auto res = call1("c10d::batch_isend_irecv",
                     {std::vector<std::string>{"isend", "irecv"}, std::vector<int64_t>{nxt, prv},
                      std::vector<int64_t>{0, 0}, std::vector<Tensor>{send, recv_row}, "world"})
                   .to_tensor_list();
    SF_CHECK(res.size() == 2 && res[1].is_same(recv_row), "batch results alias their tensors");
    call1("c10d::wait_tensor", {res[0]});
    call1("c10d::wait_tensor", {res[1]});
    SF_CHECK(ops::pending_work_count() == 0, "works left behind");
    for (int i = 0; i < 8; ++i)
      SF_CHECK(base.data<float>()[2 * 8 + i] == float(prv * 100 + i), "ring recv[{}]", i);
    SF_CHECK(base.data<float>()[0] == 0.0f && base.data<float>()[3 * 8] == 0.0f, "rest of the base untouched");
    // isend / irecv_ with a tag, and a self-send.
    Tensor in = iota_plus(4, float(me));
    Tensor out = kernels::zeros({4});
    call1("c10d::isend", {in, me, 7, "world"});
    call1("c10d::irecv_", {out, me, 7, "world"});
    call1("c10d::wait_tensor", {out});
    call1("c10d::wait_tensor", {in});
    SF_CHECK(out.data<float>()[3] == float(me + 3), "self-send");
    return 0;
  });
  SF_EXPECT_JOB_OK(r);
}

TEST_P(C10dOpsAtRanks, SymmMemOpsNeedSymmetricArgs) {
  auto r = run_job(GetParam(), [] {
    dist::init();
    const int W = dist::world().size(), me = dist::world().rank();
    Tensor regular = iota_plus(16, float(me));
    bool threw = false;
    try {
      call1("symm_mem::one_shot_all_reduce", {regular, "sum", "world"});
    } catch (const Error& e) {
      threw = std::string(e.what()).find("argument 'input' must be in symmetric memory") != std::string::npos;
    }
    SF_CHECK(threw, "a regular input to one_shot_all_reduce was accepted");

    Tensor x = symm::empty({16}, DType::f32);
    kernels::copy_(x, regular);
    dist::reset_staged_copy_stats();
    Tensor y = call1("symm_mem::one_shot_all_reduce", {x, "sum", "world"}).to_tensor();
    SF_CHECK(dist::staged_copy_stats().bytes == 0, "one-shot on a symmetric input copied");
    SF_CHECK(y.data<float>()[1] == float(W + W * (W - 1) / 2), "one_shot value {}", y.data<float>()[1]);
    // The aliased-return in-place forms return their input.
    SF_CHECK(call1("symm_mem::multimem_all_reduce_", {x, "sum", "world"}).to_tensor().is_same(x), "alias");
    SF_CHECK(call1("symm_mem::two_shot_all_reduce_", {x, "sum", "world"}).to_tensor().is_same(x), "alias");
    SF_CHECK(x.data<float>()[1] == float(W * (W + W * (W - 1) / 2)), "two-shot value {}", x.data<float>()[1]);
    // reduce_scatter_out along the last dim: [2, W*3] -> [2, 3].
    Tensor rs_in = symm::empty({2, 3 * W}, DType::f32);
    kernels::fill_(rs_in, Scalar(1.0));
    Tensor rs_out = kernels::zeros({2, 3});
    call1("symm_mem::reduce_scatter_out", {rs_in, "world", true, rs_out});
    SF_CHECK(rs_out.data<float>()[5] == float(W), "reduce_scatter_out split_last_dim");
    // tile_reduce: the root gets the sum of every rank's tile.
    Tensor tile = symm::empty({2, 2}, DType::f32);
    kernels::fill_(tile, Scalar(double(me + 1)));
    Tensor acc = kernels::zeros({2, 2});
    call1("symm_mem::tile_reduce", {tile, acc, 0, "world"});
    if (me == 0) SF_CHECK(acc.data<float>()[3] == float(W * (W + 1) / 2), "tile_reduce {}", acc.data<float>()[3]);
    else SF_CHECK(acc.data<float>()[3] == 0.0f, "tile_reduce wrote a non-root");
    return 0;
  });
  SF_EXPECT_JOB_OK(r);
}

INSTANTIATE_TEST_SUITE_P(Ranks, C10dOpsAtRanks, ::testing::Values(2, 3, 4));

// Anonymous resident memory in KiB (RssAnon): where a per-call leak would show.
// Code and shared-memory pages, which fault in late under load, are excluded.
long anon_rss_kib() {
  FILE* f = fopen("/proc/self/status", "r");
  long kib = -1;
  char line[256];
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "RssAnon: %ld kB", &kib) == 1) break;
  if (f) fclose(f);
  return kib;
}

// 10k collectives and exchanges of mixed kinds: nothing may grow per call —
// neither resident memory nor the symmetric heap nor the pending-work registry.
TEST(C10dOpsLongRun, TenThousandMixedCollectivesKeepMemoryFlat) {
  auto r = run_job(2, [] {
    dist::init();
    auto& g = dist::world();
    const int W = g.size(), me = g.rank();
    Tensor sx = symm::empty({256}, DType::f32);
    Tensor big = symm::empty({1 << 16}, DType::f32);
    Tensor regular = iota_plus(256, 0.0f);
    Tensor recv = kernels::zeros({256});
    auto round = [&](int i) {
      kernels::fill_(sx, Scalar(1.0));
      switch (i % 6) {
        case 0: call1("symm_mem::one_shot_all_reduce", {sx, "sum", "world"}); break;
        case 1: call1("c10d::all_reduce_", {regular, "max", "world"}); break;  // staged
        case 2: call1("symm_mem::two_shot_all_reduce_", {big, "sum", "world"}); break;
        case 3: call1("c10d::all_gather_into_tensor", {sx, W, "world"}); break;
        case 4: call1("c10d::reduce_scatter_tensor", {sx, "sum", W, "world"}); break;
        case 5: {
          auto res = call1("c10d::batch_isend_irecv",
                           {std::vector<std::string>{"isend", "irecv"},
                            std::vector<int64_t>{(me + 1) % W, (me + W - 1) % W}, std::vector<int64_t>{1, 1},
                            std::vector<Tensor>{regular, recv}, "world"}).to_tensor_list();
          call1("c10d::wait_tensor", {res[0]});
          call1("c10d::wait_tensor", {res[1]});
          break;
        }
      }
    };
    for (int i = 0; i < 600; ++i) round(i);  // warm up: workspaces, caches
    const long rss0 = anon_rss_kib();
    const size_t heap0 = g.heap().bytes_in_use(), high0 = g.heap().high_water();
    for (int i = 0; i < 10000; ++i) round(i);
    const long rss1 = anon_rss_kib();
    SF_CHECK(g.heap().bytes_in_use() == heap0, "heap use grew from {} to {} bytes", heap0, g.heap().bytes_in_use());
    SF_CHECK(g.heap().high_water() == high0, "heap high water grew from {} to {}", high0, g.heap().high_water());
    // Not under ASan: its quarantine holds freed memory instead of reusing it
    // (RSS grows by design); LeakSanitizer checks for leaks there instead.
#if !defined(__SANITIZE_ADDRESS__)
    SF_CHECK(rss0 > 0 && rss1 - rss0 < 128, "anonymous memory grew by {} KiB over 10k collectives", rss1 - rss0);
#else
    (void)rss0, (void)rss1;
#endif
    SF_CHECK(ops::pending_work_count() == 0, "pending works left");
    return 0;
  });
  SF_EXPECT_JOB_OK(r);
}

}  // namespace
}  // namespace symmflow
