// The user's one include, as a user writes against it: this file includes
// symmflow/symmflow.h and no other symmflow header (gtest and the standard
// library aside), and uses the public API eagerly, compiled, and at 2 ranks
// under `symmflow launch`. It also checks what the include pulls in: no
// transport internals (runtime/shm/*, runtime/net/*, runtime/p2p/channel.h,
// runtime/process_group_internal.h). tests/public_header_check.cmake checks
// that the internals cannot be named through it.
#include "symmflow/symmflow.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace sf = symmflow;

namespace {

sf::Tensor step(sf::Tensor x, sf::Tensor y) { return x * 2 + y; }

TEST(PublicHeader, EagerAndCompiledAgree) {
  sf::Tensor x = sf::kernels::randn({64}, sf::DType::f32, 1), y = sf::kernels::randn({64}, sf::DType::f32, 2);
  sf::Tensor eager = step(x, y);
  auto fast = sf::compile(step);
  sf::Tensor compiled = fast(x, y);
  ASSERT_EQ(compiled.numel(), 64);
  for (int64_t i = 0; i < 64; ++i) EXPECT_EQ(eager.data<float>()[i], compiled.data<float>()[i]) << i;
}

// Runs only inside `symmflow launch` (SYMMFLOW_RANK set); the test below starts it.
TEST(PublicHeader, RankBody) {
  if (!std::getenv("SYMMFLOW_RANK")) GTEST_SKIP() << "runs as a rank of PublicHeader.TwoRanks";
  sf::dist::init();
  auto& g = sf::dist::world();
  const int W = g.size(), r = g.rank();
  sf::Tensor x = sf::symm::empty({1024}, sf::DType::f32);
  sf::kernels::fill_(x, sf::Scalar(double(r + 1)));
  sf::dist::all_reduce_(x);
  EXPECT_EQ(x.data<float>()[1023], float(W * (W + 1) / 2));
  // A ring exchange with the P2P API.
  sf::Tensor out = sf::kernels::full({16}, sf::Scalar(double(r)), sf::DType::f32);
  sf::Tensor in = sf::Tensor::empty({16}, sf::DType::f32);
  auto works = sf::dist::batch_isend_irecv(
      {sf::dist::P2POp::send(out, (r + 1) % W), sf::dist::P2POp::recv(in, (r + W - 1) % W)});
  for (auto& w : works) w.wait();
  EXPECT_EQ(in.data<float>()[15], float((r + W - 1) % W));
  g.barrier("public header");
  sf::dist::shutdown();
}

TEST(PublicHeader, TwoRanks) {
  if (std::getenv("SYMMFLOW_RANK")) GTEST_SKIP() << "already a rank";
  std::string cmd = std::string(SYMMFLOW_CLI) +
                    " launch --nproc 2 -- /proc/" + std::to_string(getpid()) +
                    "/exe --gtest_filter=PublicHeader.RankBody 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  EXPECT_EQ(pclose(p), 0) << out;
  EXPECT_EQ(out.find("SKIPPED"), std::string::npos) << out;
}

// The headers symmflow.h pulls in, as the compiler lists them (-MM).
TEST(PublicHeader, PullsInNoTransportInternals) {
  std::string cmd = std::string("echo '#include \"symmflow/symmflow.h\"' | ") + SF_CXX +
                    " -std=c++20 -I" + SF_SOURCE_DIR + "/src -MM -x c++ - 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string text;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) text.append(buf, n);
  ASSERT_EQ(pclose(p), 0) << cmd << "\n" << text;
  ASSERT_NE(text.find("symmflow/runtime/process_group.h"), std::string::npos) << text;
  for (const char* internal : {"symmflow/runtime/shm/", "symmflow/runtime/net/",
                               "symmflow/runtime/p2p/channel.h",
                               "symmflow/runtime/process_group_internal.h"}) {
    EXPECT_EQ(text.find(internal), std::string::npos)
        << "symmflow/symmflow.h pulls in " << internal << ":\n" << text;
  }
}

}  // namespace
