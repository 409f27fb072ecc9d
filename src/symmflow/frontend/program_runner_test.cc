#include "symmflow/frontend/program_runner.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <atomic>
#include <fstream>

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

}  // namespace
}  // namespace symmflow::frontend
