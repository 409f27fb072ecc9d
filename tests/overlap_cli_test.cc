// Overlap as a user sees it (DESIGN.md §3 steps 8 and 10, §5): `symmflow run
// --trace` writes a Chrome trace whose communication lane shows each op in
// flight while compute kernels run on the compute lane; `--explain` says what
// each op overlaps; `--no-overlap` is the baseline without; `--verify` runs the
// hazard verifier on every example.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_util.h"

namespace {

namespace fs = std::filesystem;
using sf_test::run;

std::string example(const std::string& name) {
  return std::string(SF_SOURCE_DIR) + "/examples/" + name + "/" + name + ".sf";
}

TEST(OverlapCli, TraceShowsCommunicationInFlightDuringCompute) {
  fs::path trace = fs::temp_directory_path() / ("sf-trace-" + std::to_string(getpid()) + ".json");
  auto r = run("run " + example("ring_attention") + " --nproc 2 --check --explain --trace " + trace.string());
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("check: OK"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("overlap: 3 asynchronous communication ops"), std::string::npos) << r.out;
  // The first receive lands in %kbuf itself (reinplace by bytes: no clone to
  // wait for), so it starts before %qs is computed and overlaps it too.
  EXPECT_NE(r.out.find(" kernels: aten::mul.Scalar %qs, aten::mm %scores0, aten::amax %m0"), std::string::npos) << r.out;
  std::ifstream f(trace);
  ASSERT_TRUE(f.good()) << "no trace written: " << r.out;
  auto j = nlohmann::json::parse(f);
  for (int rank : {0, 1}) {
    std::vector<nlohmann::json> compute, comm;
    for (const auto& e : j["traceEvents"])
      if (e["ph"] == "X" && e["pid"] == rank) (e["tid"] == 0 ? compute : comm).push_back(e);
    ASSERT_EQ(comm.size(), 3u) << "rank " << rank << ": one event per batch_isend_irecv, start to wait";
    for (const auto& c : comm) {
      EXPECT_EQ(c["name"].get<std::string>().rfind("c10d::batch_isend_irecv", 0), 0u) << c.dump();
      // Some matmul ran inside the window: the overlap the schedule promised happened.
      const double lo = c["ts"], hi = lo + c["dur"].get<double>();
      bool mm_inside = false;
      for (const auto& k : compute)
        mm_inside |= k["name"].get<std::string>().rfind("aten::mm", 0) == 0 && k["ts"].get<double>() >= lo &&
                     k["ts"].get<double>() + k["dur"].get<double>() <= hi;
      EXPECT_TRUE(mm_inside) << "rank " << rank << ": no aten::mm inside " << c.dump();
    }
    EXPECT_GT(compute.size(), 40u) << "every instruction on the compute lane";
  }
  EXPECT_FALSE(fs::exists(trace.string() + ".rank0.part")) << "the per-rank parts are merged and removed";
  fs::remove(trace);
}

TEST(OverlapCli, NoOverlapWaitsAtOnce) {
  auto r = run("compile " + example("ring_attention") + " --world 2 --explain --no-overlap");
  ASSERT_EQ(r.rc, 0) << r.out;
  size_t at = 0;
  int waited_at_once = 0;
  while ((at = r.out.find("overlaps no compute", at)) != std::string::npos) ++waited_at_once, ++at;
  EXPECT_EQ(waited_at_once, 3) << r.out;
  auto c = run("run " + example("ring_attention") + " --nproc 2 --check --no-overlap --max-in-flight 1");
  EXPECT_EQ(c.rc, 0) << c.out;
}

TEST(OverlapCli, EveryExampleVerifiesAtEveryRank) {
  for (const char* ex : {"ring_overlap", "halo2d", "ring_attention", "tp_mlp"})
    for (int world : {2, 3, 4})
      for (int rank = 0; rank < world; ++rank) {
        auto r = run("compile " + example(ex) + " --world " + std::to_string(world) + " --rank " +
                     std::to_string(rank) + " --verify --max-in-flight 2");
        EXPECT_EQ(r.rc, 0) << ex << " at rank " << rank << " of " << world << ": " << r.out;
      }
}

}  // namespace
