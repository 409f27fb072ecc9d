#include "symmflow/frontend/program_runner.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <atomic>
#include <fstream>
#include <unistd.h>

#include "symmflow/ir/parser.h"
#include "symmflow/kernels/factories.h"
#include "symmflow/kernels/pointwise.h"
#include "symmflow/library/library.h"
#include "symmflow/runtime/launcher.h"
#include "symmflow/runtime/world.h"

namespace symmflow::frontend {
namespace {

// An op whose result depends on how often it ran: eager and compiled runs give
// different bits, which --check must report (rank, value, index).
std::atomic<int> g_calls{0};

TEST(ProgramRunner, CheckReportsTheFirstDifference) {
  Library lib(Library::Kind::DEF, "sftest", std::nullopt, __FILE__, __LINE__);
  lib.def("counter(Tensor x) -> Tensor", [](OpContext&, std::span<const IValue> a) -> std::vector<IValue> {
    const Tensor& x = a[0].to_tensor();
    if (x.is_meta()) return {Tensor::meta(x.sizes(), x.dtype())};
    return {kernels::add(x, Scalar(double(++g_calls)))};
  });
  lib.impl("counter", [](OpContext&, std::span<const IValue> a) -> std::vector<IValue> {
    const Tensor& x = a[0].to_tensor();
    return {Tensor::meta(x.sizes(), x.dtype())};
  }, DispatchKey::Meta);
  auto path = (std::filesystem::temp_directory_path() / "sf_counter.sf").string();
  std::ofstream(path) << "graph @f(%x: f32[4]) -> (f32[4]) {\n  %y = sftest::counter(%x)\n  return %y\n}\n";
  int rc = runtime::launch_fn(1, [&] {
    dist::init();
    RankReport r = run_on_this_rank({.file = path, .mode = RunMode::check});
    SF_CHECK(r.compared && !r.match, "the difference was not seen");
    SF_CHECK(r.first_difference.find("rank 0: output 0 (%y) index 0: eager ") == 0, "got: {}", r.first_difference);
    return 0;
  });
  EXPECT_EQ(rc, 0);
  std::filesystem::remove(path);
}

// Rank 0 and rank 1 run different graphs (rank sets): a file is stray unless
// the rank it names runs a graph with that input.
TEST(ProgramRunner, CheckInputsDirRefusesFilesNoRankReads) {
  const char* text =
      "graph @p ranks 0 (%a: f32[2], %n: i64) -> (f32[2]) {\n  return %a\n}\n"
      "graph @p ranks 1 (%b: f32[2], %n: i64) -> (f32[2]) {\n  return %b\n}\n";
  auto g0 = ir::parse_graph(text, {.file = "p.sf", .rank = 0, .world = 2});
  auto g1 = ir::parse_graph(text, {.file = "p.sf", .rank = 1, .world = 2});
  const std::vector<const ir::Graph*> graphs = {g0.get(), g1.get()};
  auto dir = std::filesystem::temp_directory_path() / ("sf_inputs_dir_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto touch = [&](const std::string& name) { std::ofstream(dir / name) << "x"; };
  // b.rank7.npy: for a job of 8 or more ranks.
  for (const char* ok : {"a.npy", "a.rank0.npy", "b.rank1.npy", "b.npy", "b.rank7.npy", "notes.txt"}) touch(ok);
  EXPECT_NO_THROW(check_inputs_dir(dir.string(), graphs));
  for (const char* stray : {"a.rank1.npy", "n.npy", "c.npy", "c.rank7.npy", "a.rank.npy"}) {
    touch(stray);
    try {
      check_inputs_dir(dir.string(), graphs);
      ADD_FAILURE() << stray << " was not refused";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string(stray) + " matches no input of p.sf (its tensor inputs: %a, %b;"),
                std::string::npos)
          << e.what();
    }
    std::filesystem::remove(dir / stray);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace symmflow::frontend
