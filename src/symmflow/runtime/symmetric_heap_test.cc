// The symmetric heap: same offsets everywhere, peer access, free and reuse,
// checked mode, symm::Scope, and flat memory over many rounds.
#include "symmflow/runtime/symmetric_heap.h"

#include <cstring>

#include "symmflow/core/error.h"
#include "symmflow/core/tensor.h"
#include "symmflow/runtime/symm.h"
#include "symmflow/runtime/test_util.h"
#include "symmflow/runtime/world.h"

namespace symmflow::dist {
namespace {

using runtime::testing::run_job;

// Every rank writes `v` into slot[rank] of a symmetric table on rank 0; after a
// barrier rank 0 checks all entries are equal.
void check_same_everywhere(uint64_t v, const char* what) {
  auto& w = world();
  auto table = w.heap().allocate(sizeof(uint64_t) * size_t(w.size()));
  static_cast<uint64_t*>(table->peer_ptr(0))[w.rank()] = v;
  w.barrier(what);
  if (w.rank() == 0) {
    auto* t = static_cast<uint64_t*>(table->data());
    for (int r = 0; r < w.size(); ++r)
      SF_CHECK(t[r] == t[0], "{}: rank {} has {}, rank 0 has {}", what, r, t[r], t[0]);
  }
  w.barrier(what);
}

class HeapAtRanks : public ::testing::TestWithParam<int> {};

TEST_P(HeapAtRanks, SameOffsetsOnAllRanks) {
  auto r = run_job(GetParam(), [] {
    init();
    auto& h = world().heap();
    SF_CHECK(h.checked(), "tests run the heap in checked mode");
    std::vector<std::shared_ptr<Storage>> keep;
    for (size_t n : {1, 64, 100, 4096, 65536, 100000, 3, 1 << 20}) {
      keep.push_back(h.allocate(n));
      size_t off = keep.back()->symmetric()->heap_offset();
      SF_CHECK(off % (n >= 65536 ? 4096 : 64) == 0, "offset {} of a {}-byte block misaligned", off, n);
      check_same_everywhere(off, "offset");
    }
    return 0;
  });
  SF_EXPECT_JOB_OK(r);
}

TEST_P(HeapAtRanks, WriteIntoPeerThenSignal) {
  auto r = run_job(GetParam(), [] {
    init();
    auto& w = world();
    int me = w.rank(), n = w.size(), next = (me + 1) % n, prev = (me + n - 1) % n;
    auto buf = w.heap().allocate(1000 * sizeof(int));
    std::vector<int> src(1000);
    for (int round = 1; round <= 50; ++round) {
      for (int i = 0; i < 1000; ++i) src[size_t(i)] = me * 100000 + round * 1000 + i;
      w.signals().put_with_signal(buf->peer_ptr(next), src.data(), 4000, next, 7);
      w.signals().wait_signal(prev, 7, uint64_t(round), "ring put");
      auto* got = static_cast<int*>(buf->data());
      for (int i = 0; i < 1000; ++i)
        SF_CHECK(got[i] == prev * 100000 + round * 1000 + i, "round {} element {}: got {}", round,
                 i, got[i]);
      // The sender may not overwrite the buffer before we have read it.
      w.signals().signal(prev, 8);
      w.signals().wait_signal(next, 8, uint64_t(round), "buffer free");
    }
    return 0;
  });
  SF_EXPECT_JOB_OK(r);
}

INSTANTIATE_TEST_SUITE_P(Ranks, HeapAtRanks, ::testing::Values(2, 3, 4));

TEST(SymmetricHeap, FreeAndReuse) {
  auto r = run_job(2, [] {
    init();
    auto& h = world().heap();
    size_t base = h.bytes_in_use();
    auto a = h.allocate(1024), b = h.allocate(1024);
    size_t off_a = a->symmetric()->heap_offset(), off_b = b->symmetric()->heap_offset();
    SF_CHECK(off_b == off_a + 1024, "b at {} expected {}", off_b, off_a + 1024);
    a.reset();
    auto c = h.allocate(1024);
    SF_CHECK(c->symmetric()->heap_offset() == off_a, "freed block not reused: {} vs {}",
             c->symmetric()->heap_offset(), off_a);
    auto big = h.allocate(1 << 20);
    size_t off_big = big->symmetric()->heap_offset();
    big.reset();
    b.reset();
    c.reset();
    // Everything coalesced: a large block fits at the very start again.
    auto big2 = h.allocate(1 << 20);
    SF_CHECK(big2->symmetric()->heap_offset() <= off_big, "coalescing failed");
    big2.reset();
    SF_CHECK(h.bytes_in_use() == base && h.live_allocations() == 0, "in use {} live {}",
             h.bytes_in_use(), h.live_allocations());
    return 0;
  });
  SF_EXPECT_JOB_OK(r);
}

TEST(SymmetricHeap, OutOfMemoryIsAClearError) {
  auto r = run_job(2, [] {
    init();
    try {
      world().heap().allocate(size_t(1) << 40);
    } catch (const Error& e) {
      SF_CHECK(std::string(e.what()).find("out of memory: asked for 1099511627776 bytes") !=
                   std::string::npos, "{}", e.what());
      return 0;
    }
    return 1;
  });
  SF_EXPECT_JOB_OK(r);
}

TEST(SymmetricHeap, CheckedModeCatchesMismatchedAllocation) {
  auto r = run_job(3, [] {
    init();
    auto& h = world().heap();
    auto a = h.allocate(256);
    auto b = h.allocate(world().rank() == 2 ? 2048 : 1024);  // the bug
    world().barrier("after the allocations");
    return 0;
  });
  EXPECT_NE(r.rc, 0);
  EXPECT_EQ(r.report.first_failed_rank, 2) << r.err;
  EXPECT_NE(r.err.find("symmflow: rank 2: checked symmetric heap of group 'world': heap "
                       "operation #2 differs between ranks: rank 2 did allocate(2048 bytes) -> "
                       "offset 256 but rank 0 did allocate(1024 bytes) -> offset 256"),
            std::string::npos)
      << r.err;
  runtime::testing::expect_clean(r);
}

TEST(SymmetricHeap, CheckedModeCatchesMismatchedFree) {
  auto r = run_job(2, [] {
    init();
    auto& h = world().heap();
    auto a = h.allocate(256);
    if (world().rank() == 1) a.reset();  // rank 1 frees early
    auto b = h.allocate(256);
    world().barrier();
    return 0;
  });
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.err.find("rank 1 did free(offset 0, 256 bytes) but rank 0 did allocate(256 bytes)"),
            std::string::npos) << r.err;
  runtime::testing::expect_clean(r);
}

TEST(SymmetricHeap, ScopeMakesTensorEmptySymmetric) {
  auto r = run_job(3, [] {
    init();
    auto& w = world();
    Tensor plain = Tensor::empty({4});
    SF_CHECK(!plain.is_symmetric(), "Tensor::empty outside a Scope is regular");
    Tensor s0 = symm::empty({16, 4}, DType::f32);
    SF_CHECK(s0.is_symmetric(), "symm::empty is symmetric");
    Tensor t;
    {
      symm::Scope scope;
      t = Tensor::empty({8}, DType::i64);
      SF_CHECK(t.is_symmetric(), "Tensor::empty inside a Scope is symmetric");
    }
    SF_CHECK(!Tensor::empty({4}).is_symmetric(), "the Scope ended");
    auto* region = t.storage()->symmetric();
    SF_CHECK(region->group_name() == "world" && region->rank() == w.rank() &&
                 region->world_size() == 3, "region metadata");
    check_same_everywhere(region->heap_offset(), "tensor offset");
    // Fill mine, read every peer's through peer_ptr.
    for (int i = 0; i < 8; ++i) t.data<int64_t>()[i] = w.rank() * 10 + i;
    w.barrier();
    for (int p = 0; p < 3; ++p) {
      auto* q = static_cast<int64_t*>(t.storage()->peer_ptr(p));
      for (int i = 0; i < 8; ++i) SF_CHECK(q[i] == p * 10 + i, "peer {} element {}: {}", p, i, q[i]);
    }
    w.barrier();
    return 0;
  });
  SF_EXPECT_JOB_OK(r);
}

TEST(SymmetricHeap, TenThousandRoundsLeaveUsageFlat) {
  auto r = run_job(2, [] {
    init();
    auto& w = world();
    auto& h = w.heap();
    int peer = 1 - w.rank();
    size_t base = h.bytes_in_use();
    size_t high_after_first = 0;
    uint64_t payload = 0;
    for (int round = 1; round <= 10000; ++round) {
      auto st = h.allocate(size_t(64 + (round % 7) * 512));
      payload = uint64_t(round);
      w.signals().put_with_signal(st->peer_ptr(peer), &payload, sizeof payload, peer, 9);
      w.signals().wait_next(peer, 9, "memory round");
      SF_CHECK(*static_cast<uint64_t*>(st->data()) == uint64_t(round), "round {}", round);
      w.signals().signal(peer, 10);  // done reading: the peer may free
      w.signals().wait_next(peer, 10, "memory round done");
      st.reset();
      if (round == 7) high_after_first = h.high_water();
    }
    SF_CHECK(h.bytes_in_use() == base, "in use {} after the rounds, {} before", h.bytes_in_use(), base);
    SF_CHECK(h.high_water() == high_after_first, "high water grew from {} to {}", high_after_first,
             h.high_water());
    SF_CHECK(h.operations() == 20000, "operations {}", h.operations());
    return 0;
  });
  SF_EXPECT_JOB_OK(r);
}

}  // namespace
}  // namespace symmflow::dist
