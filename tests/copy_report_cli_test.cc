// One copy report (exec/copy_report.h), three readers that cannot disagree:
// for every .sf program in examples/ and tests/, run through the CLI at world 2,
// `--explain`'s header ("C copies (B bytes)"), its copy lines and `--json`'s
// "copies" (totals, per origin, each entry) say the same. One test case per
// program, so ctest runs them side by side.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "cli_util.h"

namespace {

namespace fs = std::filesystem;

// Every program, by path relative to the source tree. tests/race, tests/match
// and tests/deadlock hold programs that are wrong on purpose: they never run,
// or fail when they do (race_cli_test, match_cli_test and
// runtime_errors_cli_test check their errors).
std::vector<std::string> programs() {
  std::vector<std::string> out;
  const fs::path root = SF_SOURCE_DIR;
  for (const char* dir : {"examples", "tests"})
    for (const auto& e : fs::recursive_directory_iterator(root / dir))
      if (e.path().extension() == ".sf" && e.path().parent_path().filename() != "race" &&
          e.path().parent_path().filename() != "match" && e.path().parent_path().filename() != "deadlock")
        out.push_back(fs::relative(e.path(), root).string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string test_name(const testing::TestParamInfo<std::string>& info) {
  std::string n = info.param;
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

class CopyReportCli : public testing::TestWithParam<std::string> {};

TEST_P(CopyReportCli, ExplainAndJsonCountTheSameCopies) {
  const std::string file = std::string(SF_SOURCE_DIR) + "/" + GetParam();
  const fs::path json = fs::temp_directory_path() / ("sf-copies-" + std::to_string(getpid()) + ".json");
  std::string load = GetParam().find("plugin") != std::string::npos ? std::string(" --load ") + SF_EXAMPLE_PLUGIN : "";
  auto r = sf_test::run("run " + file + " --nproc 2 --explain --json " + json.string() + load);
  ASSERT_EQ(r.rc, 0) << r.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex(R"(explain @\S+ \(rank 0 of 2\): \d+ ops, \d+ run in place, (\d+) cop(?:y|ies) \((\d+) bytes\))")))
      << r.out;
  const int64_t header_count = std::stoll(m[1]), header_bytes = std::stoll(m[2]);
  std::ifstream f(json);
  ASSERT_TRUE(f.good()) << r.out;
  auto j = nlohmann::json::parse(f);
  fs::remove(json);
  const auto& c = j["copies"];
  EXPECT_EQ(c["count"].get<int64_t>(), header_count) << r.out << c.dump(2);
  EXPECT_EQ(c["bytes"].get<int64_t>(), header_bytes) << r.out << c.dump(2);
  // The explain lines are the entries, one each: "... N bytes copied [origin] (why)".
  int64_t lines = 0, line_bytes = 0;
  const std::regex line(R"(\n  \S+: (\d+) bytes copied(?: in \d+ copies)? \[(\w+)\])");
  for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), line); it != std::sregex_iterator(); ++it) {
    ++lines;
    line_bytes += std::stoll((*it)[1]);
  }
  EXPECT_EQ(lines, int64_t(c["entries"].size())) << r.out << c.dump(2);
  EXPECT_EQ(line_bytes, header_bytes) << r.out;
  int64_t by_origin = 0, entries = 0;
  for (const char* o : {"inputs_to_symmetric", "outputs_from_symmetric", "staged", "reinplace"})
    by_origin += c[o]["count"].get<int64_t>();
  for (const auto& e : c["entries"]) entries += e["count"].get<int64_t>();
  EXPECT_EQ(by_origin, header_count) << c.dump(2);
  EXPECT_EQ(entries, header_count) << c.dump(2);
  // The algorithm labels promise no more than the run keeps: every staged copy
  // the run measured belongs to an op labelled `staged`. Ops that read
  // otherwise stage nothing: a P2P batch whose buffers peers address in place
  // (rows, columns), a collective on symmetric buffers (one run each), a
  // symm_mem op that copies nothing by definition (before symm_mem ops were
  // held to it, tile_reduce read `direct` while it staged its strided tile on
  // the ranks that were not the root). The run charges each copy to the op
  // that made it (runtime/copy_stats.h, staging owners), not to the op whose
  // wait happened to progress it. A lone c10d::isend labelled direct stages
  // nothing either: every rank's program is modelled at load (symm_mem ops as
  // the collectives they are) and such a send waits for its receive's post
  // (exec/rendezvous_sends.h); before symm_mem ops were modelled, a program with
  // one kept every lone send eager, and a small one posted before the peer's
  // receive went through a slot (tests/diff/repro/symm_plan_differs_rank_view.sf:
  // 1536 bytes staged on each of its lone isend and irecv_).
  std::map<std::string, std::string> label_at, op_at;  // "line:col" -> algorithm, op
  if (j.contains("algorithms"))
    for (const auto& [op, algorithm] : j["algorithms"].items()) {
      const std::string at = op.substr(0, op.find(' '));
      label_at[at] = algorithm.get<std::string>();
      op_at[at] = op.substr(op.find(' ') + 1);
    }
  for (const auto& e : c["entries"]) {
    if (e["origin"] != "staged") continue;
    const std::string at = std::to_string(e["line"].get<int>()) + ":" + std::to_string(e["col"].get<int>());
    EXPECT_EQ(label_at[at], "staged") << "a staged copy at " << at << " (" << op_at[at]
                                      << ") on an op labelled otherwise\n" << j["algorithms"].dump(2) << c.dump(2);
  }
}

INSTANTIATE_TEST_SUITE_P(EveryProgram, CopyReportCli, testing::ValuesIn(programs()), test_name);

// The copy report of `program` (a path under the source tree) run with --check.
nlohmann::json program_copies(const std::string& program, const std::string& flags) {
  const fs::path json = fs::temp_directory_path() / ("sf-ring-" + std::to_string(getpid()) + ".json");
  auto r = sf_test::run("run " + std::string(SF_SOURCE_DIR) + "/" + program + " --check -q --json " +
                        json.string() + flags);
  EXPECT_EQ(r.rc, 0) << r.out;
  std::ifstream f(json);
  auto j = nlohmann::json::parse(f);
  fs::remove(json);
  return j["copies"];
}

nlohmann::json example_copies(const std::string& example, const std::string& flags) {
  return program_copies("examples/" + example + "/" + example + ".sf", flags);
}

// The seed's own kernel: its receive buffers are graph inputs received into
// whole before any read. Passed regular, each costs exactly one counted copy
// (back to the caller; nothing is copied in, nothing staged); passed symmetric,
// none (the peers write the caller's tensors directly).
TEST(CopyReportCli, RingOverlapCopiesEachRegularReceiveInputOnceAndSymmetricOnesNever) {
  auto regular = example_copies("ring_overlap", " --nproc 2");
  EXPECT_EQ(regular["count"].get<int64_t>(), 2) << regular.dump(2);
  EXPECT_EQ(regular["inputs_to_symmetric"]["count"].get<int64_t>(), 2) << regular.dump(2);
  EXPECT_EQ(regular["staged"]["count"].get<int64_t>(), 0) << regular.dump(2);
  for (const auto& e : regular["entries"])
    EXPECT_NE(e["why"].get<std::string>().find("copied back"), std::string::npos) << e.dump();
  auto symmetric = example_copies("ring_overlap", " --nproc 2 --symmetric-inputs");
  EXPECT_EQ(symmetric["count"].get<int64_t>(), 0) << symmetric.dump(2);
  EXPECT_EQ(symmetric["bytes"].get<int64_t>(), 0) << symmetric.dump(2);
}

// The flagship programs with symmetric inputs copy nothing: receives land in
// the caller's grid or the double buffer (reinplace by bytes), the halo rows'
// sends wait for the peer's post instead of going eager (a batch whose
// matching receive is in the peer's same batch), the all_reduce's buffer is
// produced in place. At 2 and 4 ranks.
TEST(CopyReportCli, FlagshipsWithSymmetricInputsCopyNothing) {
  for (const char* example : {"ring_overlap", "halo2d", "ring_attention", "tp_mlp", "seq_parallel"})
    for (const char* nproc : {" --nproc 2", " --nproc 4"}) {
      auto c = example_copies(example, std::string(nproc) + " --symmetric-inputs");
      EXPECT_EQ(c["count"].get<int64_t>(), 0) << example << nproc << c.dump(2);
      EXPECT_EQ(c["staged"]["bytes"].get<int64_t>(), 0) << example << nproc << c.dump(2);
    }
}

// Column halos (strided views): with symmetric grids the peers write the
// columns in place, nothing is copied or staged (4 staged copies per rank and
// run at 2 ranks before the receive post carried layouts). Passed regular, the
// received columns live in a symmetric twin and only they are copied back (one
// copy of 2 x 64 x 4 bytes) when every read after the exchange lies inside a
// received column or outside them all (halo_columns_twin.sf); a stencil whose
// operand spans a halo column and owned ones (halo_columns.sf) costs the grid's
// copy in and back. Nothing is staged either way.
TEST(CopyReportCli, ColumnHalosOfSymmetricGridsCopyNothing) {
  for (const char* nproc : {" --nproc 2", " --nproc 4"})
    for (const char* program : {"tests/diff/programs/halo_columns.sf", "tests/diff/programs/halo_columns_twin.sf"}) {
      auto c = program_copies(program, std::string(nproc) + " --symmetric-inputs");
      EXPECT_EQ(c["count"].get<int64_t>(), 0) << program << nproc << c.dump(2);
      EXPECT_EQ(c["staged"]["bytes"].get<int64_t>(), 0) << program << nproc << c.dump(2);
    }
}

TEST(CopyReportCli, ColumnHalosOfRegularGridsCopyTheReceivedColumnsBackOnly) {
  for (const char* nproc : {" --nproc 2", " --nproc 4"}) {
    auto twin = program_copies("tests/diff/programs/halo_columns_twin.sf", nproc);
    EXPECT_EQ(twin["staged"]["count"].get<int64_t>(), 0) << nproc << twin.dump(2);
    EXPECT_EQ(twin["count"].get<int64_t>(), 1) << nproc << twin.dump(2);
    EXPECT_EQ(twin["bytes"].get<int64_t>(), 2 * 64 * 4) << nproc << twin.dump(2);
    auto mixed = program_copies("tests/diff/programs/halo_columns.sf", nproc);
    EXPECT_EQ(mixed["staged"]["count"].get<int64_t>(), 0) << nproc << mixed.dump(2);
    EXPECT_EQ(mixed["inputs_to_symmetric"]["count"].get<int64_t>(), 2) << nproc << mixed.dump(2);
  }
}

// The flagship programs with regular inputs: nothing staged, no clone, no
// output copied out, and at most one copy per input (issue 17's goal): an input
// received whole is only copied back (its old bytes are dead), one received in
// part only its received rows back (halo2d's grids, passes/receive_twins.h),
// one a collective reads only in. halo2d's grids took 16 staged halo-row copies
// before, then 3 whole-grid copies.
TEST(CopyReportCli, FlagshipsWithRegularInputsCopyEachInputAtMostOnceAndStageNothing) {
  for (const char* example : {"ring_overlap", "halo2d", "ring_attention", "tp_mlp", "seq_parallel"})
    for (const char* nproc : {" --nproc 2", " --nproc 4"}) {
      auto c = example_copies(example, nproc);
      EXPECT_EQ(c["staged"]["count"].get<int64_t>(), 0) << example << nproc << c.dump(2);
      EXPECT_EQ(c["reinplace"]["count"].get<int64_t>(), 0) << example << nproc << c.dump(2);
      EXPECT_EQ(c["outputs_from_symmetric"]["count"].get<int64_t>(), 0) << example << nproc << c.dump(2);
      std::map<std::string, int> per_input;
      for (const auto& e : c["entries"]) per_input[e["value"].get<std::string>()] += int(e["count"].get<int64_t>());
      for (const auto& [value, n] : per_input) EXPECT_EQ(n, 1) << example << nproc << " " << value << c.dump(2);
    }
}

// halo2d's grids: the rows received into each (its top and bottom halo rows)
// live in a symmetric twin; the rest stays the caller's. Each grid costs one
// copy back of its two halo rows, not the whole grid in and back.
TEST(CopyReportCli, Halo2dCopiesOnlyEachGridsReceivedRowsBack) {
  auto halo = example_copies("halo2d", " --nproc 2");
  EXPECT_EQ(halo["count"].get<int64_t>(), 2) << halo.dump(2);
  EXPECT_EQ(halo["bytes"].get<int64_t>(), 2 * 2 * 256 * 4) << halo.dump(2);
  std::map<std::string, std::vector<bool>> copies;  // value -> is it a copy back, per copy
  for (const auto& e : halo["entries"])
    copies[e["value"].get<std::string>()].push_back(e["why"].get<std::string>().find("copied back") !=
                                                     std::string::npos);
  EXPECT_EQ(copies["%u"], (std::vector<bool>{true})) << halo.dump(2);
  EXPECT_EQ(copies["%v"], (std::vector<bool>{true})) << halo.dump(2);
}

// Sequence parallelism with regular inputs: exactly one counted copy, of the one
// input a collective reads (the gathered sequence slice), none of the others.
TEST(CopyReportCli, SeqParallelCopiesOnlyTheGatheredInputOnce) {
  auto c = example_copies("seq_parallel", " --nproc 2");
  EXPECT_EQ(c["count"].get<int64_t>(), 1) << c.dump(2);
  EXPECT_EQ(c["inputs_to_symmetric"]["count"].get<int64_t>(), 1) << c.dump(2);
  ASSERT_EQ(c["entries"].size(), 1u) << c.dump(2);
  EXPECT_EQ(c["entries"][0]["value"].get<std::string>(), "%x") << c.dump(2);
}

TEST(CopyReportCli, CoversTheExamplesAndTheTestPrograms) {
  auto all = programs();
  EXPECT_GE(all.size(), 60u);
  for (const char* e : {"examples/ring_overlap/ring_overlap.sf", "examples/tp_mlp/tp_mlp.sf"})
    EXPECT_NE(std::find(all.begin(), all.end(), e), all.end()) << e;
}

}  // namespace
