// `symmflow run` and `symmflow compile` as a user runs them: exit codes, --check,
// --dump-ir, --save-outputs / --inputs, --json (DESIGN.md §5).
#include <gtest/gtest.h>

#include "cli_util.h"
#include "symmflow/core/hash.h"
#include "symmflow/exec/npy.h"
#include <sys/wait.h>

#include <fmt/format.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

namespace fs = std::filesystem;

using sf_test::Result;
using sf_test::run;

const std::string kRing = std::string(SF_SOURCE_DIR) + "/examples/ring_overlap/ring_overlap.sf";
const std::string kPipeline = std::string(SF_SOURCE_DIR) + "/examples/pipeline/pipeline.sf";

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

fs::path temp_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("sf-run-cli-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string write_file(const fs::path& dir, const std::string& name, const std::string& text) {
  std::ofstream(dir / name) << text;
  return (dir / name).string();
}

TEST(RunCli, CheckIsBitwiseAtTwoRanks) {
  Result r = run("run " + kRing + " --nproc 2 --check");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("check: OK (2 ranks, 1 output and 3 inputs bitwise equal"), std::string::npos) << r.out;
}

TEST(RunCli, ProgramErrorsExitTwoWithFileLineCol) {
  auto d = temp_dir("errors");
  auto undefined = write_file(d, "u.sf", "graph @f(%x: f32[4]) -> (f32[4]) {\n  %y = aten::add(%x, %z)\n  return %y\n}\n");
  Result r = run("run " + undefined + " --nproc 2");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find(undefined + ":2:22: use of undefined value %z"), std::string::npos) << r.out;
  auto shapes = write_file(d, "s.sf", "graph @f(%x: f32[4], %y: f32[3]) -> (f32[4]) {\n  %z = aten::mul(%x, %y)\n  return %z\n}\n");
  r = run("compile " + shapes + " --world 2");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find(shapes + ":2:8: aten::mul.Tensor: "), std::string::npos) << r.out;
  // mm of f32 by f64 is refused as PyTorch refuses it.
  auto mm = write_file(d, "m.sf", "graph @f(%a: f32[2, 3], %b: f64[3, 2]) -> (f32[2, 2]) {\n  %c = aten::mm(%a, %b)\n  return %c\n}\n");
  r = run("run " + mm);
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find(":2:8: aten::mm"), std::string::npos) << r.out;
  fs::remove_all(d);
}

// Issue 20's reports, as the user ran them: each is now exit 2 with a message
// that names the place and the numbers (before: check OK with no data, exit 137
// after filling memory, std::out_of_range, a stack overflow, a cut message).
TEST(RunCli, HostileProgramsExitTwoWithAMessage) {
  auto d = temp_dir("hostile");
  auto prog = [&](const std::string& name, const std::string& type) {
    return write_file(d, name, "graph @f(%x: " + type + ") -> (" + type + ") {\n  %y = aten::neg(%x)\n  return %y\n}\n");
  };
  auto zero = prog("zero.sf", "f32[4294967296, 4294967296]");
  Result r = run("run " + zero + " --check --save-outputs " + (d / "out").string());
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find(zero + ":1:14: type f32[4294967296, 4294967296]: "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("check: OK"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(d / "out")) << "no .npy may claim that shape";
  auto wrap = prog("wrap.sf", "f32[4294967296, 4294967297]");
  r = run("run " + wrap + " --check");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("4294967296 * 4294967297 overflows"), std::string::npos) << r.out;
  auto digits = prog("digits.sf", "f32[123456789012345678901234]");
  r = run("run " + digits);
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find(digits + ":1:18: integer 123456789012345678901234 does not fit in 64 bits"), std::string::npos)
      << r.out;
  auto nested = write_file(d, "nested.sf", "graph @f() -> () {\n  %z = aten::zeros(" + std::string(30000, '[') + ")\n}\n");
  r = run("run " + nested);
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("nesting deeper than 256 levels"), std::string::npos) << r.out;
  auto binary = write_file(d, "binary.sf", std::string("graph @f(%x: f32[4]) \0\x93-> (f32[4])\n", 35));
  r = run("run " + binary);
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find(binary + ":1:22: unexpected character '\\x00'"), std::string::npos) << r.out;
  fs::remove_all(d);
}

TEST(RunCli, DumpIrShowsEveryStep) {
  Result r = run("compile " + kRing + " --world 4 --rank 1 --dump-ir -");
  ASSERT_EQ(r.rc, 0) << r.out;
  size_t last = 0;
  for (const char* step : {"# after input", "# after functionalize", "# after dce", "# after cse",
                           "# after reinplace", "# after dce.final"}) {
    size_t at = r.out.find(step, last);
    EXPECT_NE(at, std::string::npos) << step << "\n" << r.out;
    last = at == std::string::npos ? last : at;
  }
  EXPECT_NE(r.out.find("functional c10d::batch_isend_irecv"), std::string::npos) << r.out;
  auto d = temp_dir("dump");
  r = run("compile " + kRing + " --world 2 --dump-ir " + d.string() + " --dot " + (d / "g.dot").string());
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(fs::exists(d / "02-functionalize.sf"));  // 01: race_check
  EXPECT_TRUE(fs::exists(d / "g.dot"));
  fs::remove_all(d);
}

TEST(RunCli, SaveOutputsThenInputsRoundTrip) {
  auto d = temp_dir("io");
  Result r = run("run " + kRing + " --nproc 2 --mode eager --seed 3 --save-outputs " + (d / "a").string());
  ASSERT_EQ(r.rc, 0) << r.out;
  for (const char* f : {"out0.rank0.npy", "out0.rank1.npy", "x0.rank0.npy", "y0.rank1.npy", "y1.rank0.npy"})
    EXPECT_TRUE(fs::exists(d / "a" / f)) << f;
  fs::create_directories(d / "in");
  auto read = [](const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  };
  // Re-running from the saved x0 (its value never changes) with other seeds for y
  // gives the same out0: y0 and y1 are overwritten by receives before any read.
  for (int rk : {0, 1}) fs::copy_file(d / "a" / ("x0.rank" + std::to_string(rk) + ".npy"), d / "in" / ("x0.rank" + std::to_string(rk) + ".npy"));
  r = run("run " + kRing + " --nproc 2 --seed 99 --inputs " + (d / "in").string() + " --save-outputs " + (d / "b").string());
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(read(d / "a" / "out0.rank0.npy"), read(d / "b" / "out0.rank0.npy"));
  EXPECT_EQ(read(d / "a" / "out0.rank1.npy"), read(d / "b" / "out0.rank1.npy"));
  // An input file of the wrong shape is refused: exit 2 naming the input.
  write_file(d / "in", "y1.npy", "not a npy file");
  r = run("run " + kRing + " --nproc 1 --inputs " + (d / "in").string());
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("input %y1"), std::string::npos) << r.out;
  fs::remove_all(d);
}

TEST(RunCli, JsonReport) {
  auto d = temp_dir("json");
  Result r = run("run " + kRing + " --nproc 2 --check --iters 3 --json " + (d / "r.json").string());
  ASSERT_EQ(r.rc, 0) << r.out;
  std::ifstream f(d / "r.json");
  std::string j((std::istreambuf_iterator<char>(f)), {});
  for (const char* key : {"\"check\": \"ok\"", "\"copies\"", "\"count\": 0", "\"symmetric_bytes\"", "\"algorithms\"",
                          "\"eager_s\"", "\"compiled_s\"", "\"peak_bytes\""})
    EXPECT_NE(j.find(key), std::string::npos) << key << "\n" << j;
  fs::remove_all(d);
}

TEST(RunCli, StopAfterFunctionalizeRunsTheFunctionalProgram) {
  Result r = run("run " + kRing + " --nproc 3 --check --stop-after functionalize");
  EXPECT_EQ(r.rc, 0) << r.out;
  r = run("run " + kRing + " --stop-after nosuchpass");
  EXPECT_EQ(r.rc, 2) << r.out;
}

// The summary's checksum is FNV-1a of the bytes --save-outputs writes: checked
// here against the saved file of the same run.
TEST(RunCli, PrintsEachOutputsTypeChecksumAndFirstValues) {
  auto d = temp_dir("summary");
  Result r = run("run " + kRing + " --nproc 2 --seed 3 --save-outputs " + d.string());
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(r.out.find("@ring_overlap: rank 0 of 2, 1 output (compiled)\n"), 0u) << r.out;
  symmflow::Tensor out = symmflow::exec::read_npy((d / "out0.rank0.npy").string());
  const float* v = out.data<float>();
  const std::string line =
      fmt::format("  %out  f32[4096]  fnv1a {:016x}  [{}, {}, ", symmflow::fnv1a(v, out.nbytes()), v[0], v[1]);
  EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  EXPECT_NE(r.out.find(", ...]\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("rank 1 of 2"), std::string::npos) << r.out;  // an SPMD program: rank 0's outputs only
  EXPECT_EQ(r.out.find("median"), std::string::npos) << r.out;       // times only with --iters
  fs::remove_all(d);
}

TEST(RunCli, ItersPrintsMedianTimesAndQuietPrintsNoSummary) {
  Result r = run("run " + kRing + " --nproc 2 --mode both --iters 3");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("median of 3 runs on rank 0: eager "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" ms, compiled "), std::string::npos) << r.out;
  r = run("run " + kRing + " --nproc 2 --quiet");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(r.out, "");
  r = run("run " + kRing + " --nproc 2 --check -q");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(r.out.rfind("check: OK", 0), 0u) << r.out;
  EXPECT_EQ(r.out.find("@ring_overlap"), std::string::npos) << r.out;
}

// Ranks that run different code return different things: one block per rank
// set, from the first rank that runs it.
TEST(RunCli, SummaryHasOneBlockPerProgramOfTheFile) {
  Result r = run("run " + kPipeline + " --nproc 4 --mode eager");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(count(r.out, "@pipeline ranks 0: rank 0 of 4, 1 output (eager)\n"), 1u) << r.out;
  EXPECT_EQ(count(r.out, "@pipeline ranks 1..world-2: rank 1 of 4, 1 output (eager)\n"), 1u) << r.out;
  EXPECT_EQ(count(r.out, "@pipeline ranks world-1: rank 3 of 4, 1 output (eager)\n"), 1u) << r.out;
  EXPECT_EQ(count(r.out, "  %out  f32[16, 16]  fnv1a "), 3u) << r.out;
}

TEST(RunCli, InputsRefusesANpyThatNoRankReads) {
  auto d = temp_dir("stray");
  Result r = run("run " + kRing + " --nproc 2 --quiet --save-outputs " + d.string());
  ASSERT_EQ(r.rc, 0) << r.out;
  fs::create_directories(d / "in");
  fs::copy_file(d / "x0.rank1.npy", d / "in" / "x0.rank1.npy");  // read by rank 1
  fs::copy_file(d / "x0.rank0.npy", d / "in" / "x0.npy");        // read by rank 0
  write_file(d / "in", "README", "not an input: not looked at");
  r = run("run " + kRing + " --nproc 2 --quiet --inputs " + (d / "in").string());
  EXPECT_EQ(r.rc, 0) << r.out;
  // Misspelt names: each would leave its input seeded.
  fs::copy_file(d / "y0.rank0.npy", d / "in" / "yo.npy");
  fs::copy_file(d / "y0.rank1.npy", d / "in" / "y0_rank1.npy");
  r = run("run " + kRing + " --nproc 2 --inputs " + (d / "in").string());
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("y0_rank1.npy, yo.npy match no input of " + kRing + " (its tensor inputs: %x0, %y0, %y1;"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("R < 2, by the ranks whose graph has the input NAME): rename or remove them"), std::string::npos)
      << r.out;
  fs::remove_all(d);
}

}  // namespace
