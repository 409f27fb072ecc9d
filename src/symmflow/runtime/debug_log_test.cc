// SYMMFLOW_DEBUG=INFO: dist::init() logs backend and topology on every rank,
// log_algorithm_once() logs each (group, collective, dtype, numel, algo) once.
#include "symmflow/runtime/debug_log.h"

#include <string>

#include "symmflow/core/error.h"
#include "symmflow/runtime/test_util.h"
#include "symmflow/runtime/world.h"

namespace symmflow::dist {
namespace {

using runtime::testing::run_job;

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

int body() {
  init();
  auto& g = world();
  for (int i = 0; i < 3; ++i) {
    log_algorithm_once(g, "all_reduce", DType::f32, 1024, "two_shot");
    log_algorithm_once(g, "all_reduce", DType::f32, 256, "one_shot");
  }
  g.barrier();
  return 0;
}

TEST(DebugLog, InfoLogsInitAndEachAlgorithmOnce) {
  auto r = run_job(2, body, [](runtime::LaunchOptions& o) { o.env.push_back({"SYMMFLOW_DEBUG", "INFO"}); });
  SF_EXPECT_JOB_OK(r);
  for (int rank : {0, 1}) {
    std::string pre = "[symmflow rank " + std::to_string(rank) + "] INFO ";
    EXPECT_EQ(count(r.err, pre + "backend shm (default): world size 2, rank " + std::to_string(rank) +
                               ", node 0 of 1, local rank " + std::to_string(rank) + " of 2"),
              1u) << r.err;
    EXPECT_EQ(count(r.err, pre + "topology: 1 node, 2 ranks per node on this one; node 0: ranks 0-1"), 1u)
        << r.err;
    EXPECT_EQ(count(r.err, pre + "symmetric heap: 64 MiB per rank and group (checked); wait timeout 30 s"), 1u)
        << r.err;
    EXPECT_EQ(count(r.err, pre + "all_reduce f32[1024] (4K) in group 'world' (2 ranks): two_shot"), 1u)
        << r.err;
    EXPECT_EQ(count(r.err, pre + "all_reduce f32[256] (1K) in group 'world' (2 ranks): one_shot"), 1u)
        << r.err;
  }
}

TEST(DebugLog, QuietByDefault) {
  auto r = run_job(2, body);
  SF_EXPECT_JOB_OK(r);
  EXPECT_EQ(r.err.find("[symmflow "), std::string::npos) << r.err;
}

TEST(DebugLog, BadLevelIsAnErrorAtInit) {
  auto r = run_job(2, [] {
    try {
      init();
    } catch (const Error& e) {
      SF_CHECK(std::string(e.what()) == "SYMMFLOW_DEBUG: expected WARN or INFO, found 'TRACE'",
               "unexpected message: {}", e.what());
      return 0;
    }
    return 1;
  }, [](runtime::LaunchOptions& o) { o.env.push_back({"SYMMFLOW_DEBUG", "TRACE"}); });
  EXPECT_EQ(r.rc, 0) << r.err;
}

}  // namespace
}  // namespace symmflow::dist
