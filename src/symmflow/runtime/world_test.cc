// dist::init / world / groups / shutdown, and the job token check.
#include "symmflow/runtime/world.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include "symmflow/core/error.h"
#include "symmflow/runtime/process_group_internal.h"
#include "symmflow/runtime/shm/shm_backend.h"
#include "symmflow/runtime/test_util.h"

namespace symmflow::dist {
namespace {

using runtime::testing::run_job;

TEST(World, InitWithoutLauncherEnvironmentIsAClearError) {
  // The test process itself was not launched: no SYMMFLOW_* variables.
  ASSERT_EQ(std::getenv("SYMMFLOW_RANK"), nullptr);
  try {
    init();
    FAIL() << "init() succeeded without a launcher";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("SYMMFLOW_WORLD_SIZE is not set"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("symmflow launch"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(is_initialized());
}

TEST(World, InvalidRankIsAClearError) {
  auto r = run_job(2, [] {
    setenv("SYMMFLOW_RANK", "5", 1);
    try {
      init();
    } catch (const Error& e) {
      SF_CHECK(std::string(e.what()).find("SYMMFLOW_RANK must be an integer in [0, 1], found \"5\"") !=
                   std::string::npos, "unexpected message: {}", e.what());
      return 0;
    }
    return 1;
  });
  EXPECT_EQ(r.rc, 0) << r.err;
  runtime::testing::expect_clean(r);
}

TEST(World, BackendChoiceErrorsAreClear) {
  auto r = run_job(2, [] {
    auto expect_error = [](const char* var, const char* value, const char* words) {
      setenv(var, value, 1);
      try {
        init();
        fail("init() accepted {}={}", var, value);
      } catch (const Error& e) {
        SF_CHECK(std::string(e.what()).find(words) != std::string::npos, "unexpected message: {}",
                 e.what());
      }
      unsetenv(var);
    };
    // Simulated nodes need the mpi backend; the shm backend is one node.
    expect_error("SYMMFLOW_RANKS_PER_NODE", "1", "simulates nodes of the mpi backend");
    expect_error("SYMMFLOW_BACKEND", "nccl", "SYMMFLOW_BACKEND: expected shm or mpi");
    init();
    auto& w = world();
    SF_CHECK(!w.spans_nodes() && w.num_nodes() == 1 && detail::GroupAccess::net(w) == nullptr, "one node");
    SF_CHECK(&w.node_group() == &w && w.local_index(1) == 1, "node view of a one-node group");
    return 0;
  });
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  runtime::testing::expect_clean(r);
}

TEST(World, InitAtThreeRanks) {
  auto r = run_job(3, [] {
    init();
    auto& w = world();
    SF_CHECK(w.rank() == std::atoi(std::getenv("SYMMFLOW_RANK")), "rank {}", w.rank());
    SF_CHECK(w.size() == 3 && w.name() == "world", "size {} name {}", w.size(), w.name());
    SF_CHECK(w.backend()->name() == "shm", "backend {}", w.backend()->name());
    for (int p = 0; p < 3; ++p) SF_CHECK(w.is_shm_reachable(p), "peer {} unreachable", p);
    SF_CHECK(&group("world") == &w, "group(\"world\")");
    init();  // a second call does nothing
    w.barrier("after init");
    shutdown();
    SF_CHECK(!is_initialized(), "still initialized after shutdown");
    return 0;
  });
  SF_EXPECT_JOB_OK(r);
  EXPECT_EQ(r.report.segments_unlinked, 0) << "a clean job unlinks its own segments";
}

TEST(World, SubgroupsHaveTheirOwnRanksHeapAndBarrier) {
  auto r = run_job(4, [] {
    init();
    int me = world().rank();
    ProcessGroup* odd = new_group({1, 3}, "odd");
    ProcessGroup* even = new_group({2, 0}, "even");  // order sets the group ranks
    SF_CHECK((odd != nullptr) == (me % 2 == 1), "odd membership of {}", me);
    SF_CHECK((even != nullptr) == (me % 2 == 0), "even membership of {}", me);
    ProcessGroup* g = odd ? odd : even;
    int expected_rank = me == 2 ? 0 : me == 0 ? 1 : me == 1 ? 0 : 1;
    SF_CHECK(g->rank() == expected_rank && g->size() == 2, "group rank {} size {}", g->rank(),
             g->size());
    auto st = g->heap().allocate(256);
    int peer = 1 - g->rank();
    static_cast<int*>(st->peer_ptr(peer))[0] = me;
    g->signals().signal(peer, 3);
    g->signals().wait_next(peer, 3, "subgroup exchange");
    int got = static_cast<int*>(st->data())[0];
    SF_CHECK(got == g->world_rank(peer), "world rank {} received {} from its peer", me, got);
    for (int i = 0; i < 100; ++i) g->barrier();
    world().barrier();
    return 0;
  });
  SF_EXPECT_JOB_OK(r);
}

int world_rank_env() { return std::atoi(std::getenv("SYMMFLOW_RANK")); }

// A process that knows the rendezvous but not the job token is refused.
int try_attach_with_token(const char* token) {
  pid_t pid = fork();
  if (pid == 0) {
    if (token) setenv("SYMMFLOW_JOB_TOKEN", token, 1);
    else unsetenv("SYMMFLOW_JOB_TOKEN");
    try {
      init();
    } catch (const Error& e) {
      bool refused = std::string(e.what()).find("refused to attach") != std::string::npos;
      std::fprintf(stderr, "foreign process: %s\n", e.what());
      _exit(refused ? 0 : 2);
    }
    _exit(3);  // attached: the test fails
  }
  int st = 0;
  waitpid(pid, &st, 0);
  return runtime::status_code(st);
}

TEST(World, ForeignTokenIsRefused) {
  auto r = run_job(2, [] {
    if (world_rank_env() == 0) {
      SF_CHECK(try_attach_with_token("00000000000000000000000000000000") == 0, "wrong token accepted");
      SF_CHECK(try_attach_with_token(nullptr) == 0, "missing token accepted");
    }
    init();  // the refused attempts left no trace: the real rank attaches fine
    world().barrier();
    return 0;
  });
  SF_EXPECT_JOB_OK(r);
  EXPECT_NE(r.err.find("SYMMFLOW_JOB_TOKEN does not match the job's token"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("SYMMFLOW_JOB_TOKEN is missing"), std::string::npos) << r.err;
}

TEST(World, TimeoutSetting) {
  set_timeout(12.5);
  EXPECT_DOUBLE_EQ(timeout(), 12.5);
  EXPECT_THROW(set_timeout(-1), Error);
  runtime::set_wait_timeout_s(0);  // back to the environment/default
  EXPECT_DOUBLE_EQ(timeout(), 300);
}

}  // namespace
}  // namespace symmflow::dist
