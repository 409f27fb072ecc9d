// Symmetric-memory placement as the copy counters of `symmflow run --json` show
// it (issue: symmetric memory in the compiler), at 2, 3 and 4 ranks, each run
// also checked bitwise against eager.
#include <gtest/gtest.h>

#include "cli_util.h"
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

namespace fs = std::filesystem;

struct RunResult {
  int rc;
  std::string out;
  nlohmann::json report;
};

RunResult run(const std::string& program, int nproc, const std::string& flags = "") {
  fs::path json = fs::temp_directory_path() / ("sf-placement-" + std::to_string(getpid()) + ".json");
  auto cli = sf_test::run("run " + program + " --nproc " + std::to_string(nproc) + " --check --json " +
                          json.string() + " " + flags);
  RunResult r{cli.rc, cli.out, {}};
  if (fs::exists(json)) {
    std::ifstream f(json);
    r.report = nlohmann::json::parse(f);
    fs::remove(json);
  }
  return r;
}

std::string src(const std::string& rel) { return std::string(SF_SOURCE_DIR) + "/" + rel; }

std::string write_program(const std::string& name, const std::string& text) {
  fs::path p = fs::temp_directory_path() / ("sf-placement-" + std::to_string(getpid()) + "-" + name);
  std::ofstream(p) << text;
  return p.string();
}

bool has_decision(const nlohmann::json& report, const std::string& value, const std::string& reason_part) {
  for (const auto& d : report["placement"])
    if (d["value"] == value && d["reason"].get<std::string>().find(reason_part) != std::string::npos) return true;
  return false;
}

TEST(Placement, TensorParallelMlpCopiesNothingIntoSymmetricMemory) {
  for (int n : {2, 3, 4}) {
    RunResult r = run(src("examples/tp_mlp/tp_mlp.sf"), n);
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_EQ(r.report["check"], "ok");
    EXPECT_EQ(r.report["copies"]["inputs_to_symmetric"]["bytes"], 0) << r.report.dump(2);
    EXPECT_EQ(r.report["copies"]["staged"]["bytes"], 0) << r.report.dump(2);
    EXPECT_EQ(r.report["copies"]["reinplace"]["bytes"], 0) << r.report.dump(2);
    // Two micro-batches, two all_reduces: each input planned where aten::mm writes it.
    for (const char* y : {"%y0", "%y1"})
      EXPECT_TRUE(has_decision(r.report, y, "produced by aten::mm, which writes straight into the symmetric arena"))
          << y << "\n" << r.report.dump(2);
    EXPECT_GT(r.report["symmetric_bytes"].get<int64_t>(), 0);
    // Planned memory: the compiled program holds less than eager does at its peak.
    EXPECT_LE(r.report["compiled_peak_bytes"].get<int64_t>(), r.report["eager_peak_bytes"].get<int64_t>());
    // Without placement the same all_reduce is staged (the comparison baseline).
    RunResult staged = run(src("examples/tp_mlp/tp_mlp.sf"), n, "--no-placement");
    ASSERT_EQ(staged.rc, 0) << staged.out;
    EXPECT_GT(staged.report["copies"]["staged"]["bytes"].get<int64_t>(), 0) << staged.report.dump(2);
  }
}

TEST(Placement, GraphInputIsCopiedOnceUnlessAlreadySymmetric) {
  auto prog = write_program("input.sf",
                            "graph @f(%x: f32[1024]) -> (f32[1024]) {\n"
                            "  %r = c10d::all_reduce(%x, \"sum\", \"world\")\n"
                            "  %w = c10d::wait_tensor(%r)\n"
                            "  %o = aten::mul(%w, 2.0)\n"
                            "  return %o\n}\n");
  for (int n : {2, 3, 4}) {
    RunResult r = run(prog, n);
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_EQ(r.report["copies"]["inputs_to_symmetric"]["bytes"], 4096) << "exactly the input's bytes";
    EXPECT_EQ(r.report["copies"]["staged"]["bytes"], 0);
    RunResult sym = run(prog, n, "--symmetric-inputs");
    ASSERT_EQ(sym.rc, 0) << sym.out;
    EXPECT_EQ(sym.report["copies"]["inputs_to_symmetric"]["bytes"], 0) << "the caller's tensor is symmetric";
  }
  fs::remove(prog);
}

TEST(Placement, ViewBaseIsPlaced) {
  auto prog = write_program("view.sf",
                            "graph @f(%x: f32[16, 8], %w: f32[8, 8]) -> (f32[16, 8]) {\n"
                            "  %h = aten::mm(%x, %w)\n"
                            "  %s = aten::slice(%h, 0, 4, 12)\n"
                            "  c10d::all_reduce_(%s, \"sum\", \"world\")\n"
                            "  %o = aten::relu(%h)\n"
                            "  return %o\n}\n");
  for (int n : {2, 3, 4}) {
    RunResult r = run(prog, n);
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_TRUE(has_decision(r.report, "%s", "a view of %h: its base, produced by aten::mm, is planned"))
        << r.report.dump(2);
    EXPECT_EQ(r.report["copies"]["inputs_to_symmetric"]["bytes"], 0) << r.report.dump(2);
    EXPECT_EQ(r.report["copies"]["staged"]["bytes"], 0) << r.report.dump(2);
  }
  fs::remove(prog);
}

TEST(Placement, OpaqueCustomOpRunsUnderASymmetricScope) {
  // The fused op refuses a regular x (its eager check), so --check passing shows
  // that the opaque producer's output really is symmetric.
  for (int n : {2, 3, 4}) {
    RunResult r = run(src("examples/plugin/rms_norm.sf"), n, std::string("--load ") + SF_EXAMPLE_PLUGIN);
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_TRUE(has_decision(r.report, "%s", "an opaque custom op: it runs under a symmetric-allocation scope"))
        << r.report.dump(2);
    EXPECT_TRUE(has_decision(r.report, "%y", "produced by aten::mm")) << r.report.dump(2);
    EXPECT_EQ(r.report["copies"]["inputs_to_symmetric"]["bytes"], 0);
  }
}

TEST(Placement, HaloExchangePeakIsAtMostEager) {
  for (int n : {2, 3, 4}) {
    RunResult r = run(src("tests/diff/programs/halo2d.sf"), n);
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_LE(r.report["compiled_peak_bytes"].get<int64_t>(), r.report["eager_peak_bytes"].get<int64_t>());
  }
}

}  // namespace

namespace {

TEST(Tune, MeasuresTheCrossoverAndCompilationUsesIt) {
  fs::path file = fs::temp_directory_path() / ("sf-tune-" + std::to_string(getpid()) + ".json");
  auto cli = sf_test::run("tune --nproc 2 --sizes 512,1K --trials 1 --out " + file.string());
  ASSERT_EQ(cli.rc, 0) << cli.out;
  std::ifstream f(file);
  auto j = nlohmann::json::parse(f);
  ASSERT_TRUE(j["one_shot_max_bytes"].contains("2")) << j.dump(2);
  EXPECT_EQ(j["measured"]["2"].size(), 2u);
  // A tuning file that says one-shot up to 1 MiB makes a 64 KiB all_reduce one-shot.
  std::ofstream(file) << R"({"one_shot_max_bytes": {"2": 1048576}})";
  std::string prog = write_program("tuned.sf",
                                   "graph @f(%x: f32[16384]) -> (f32[16384]) {\n"
                                   "  %y = aten::mul(%x, 2.0)\n"
                                   "  c10d::all_reduce_(%y, \"sum\", \"world\")\n"
                                   "  return %y\n}\n");
  setenv("SYMMFLOW_TUNE_FILE", file.c_str(), 1);
  RunResult tuned = run(prog, 2);
  setenv("SYMMFLOW_TUNE_FILE", (file.string() + ".none").c_str(), 1);  // no tuning file: the default
  RunResult plain = run(prog, 2);
  unsetenv("SYMMFLOW_TUNE_FILE");
  ASSERT_EQ(tuned.rc, 0) << tuned.out;
  EXPECT_EQ(tuned.report["algorithms"]["3:3 c10d::all_reduce_"], "one_shot") << tuned.report.dump(2);
  EXPECT_EQ(plain.report["algorithms"]["3:3 c10d::all_reduce_"], "two_shot") << plain.report.dump(2);
  fs::remove(file);
  fs::remove(prog);
}

}  // namespace
