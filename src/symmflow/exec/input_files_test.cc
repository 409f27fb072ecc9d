// `--inputs DIR` files: the rank's own file first, then the shared one; a file
// that does not match the signature is a ParseError naming the input.
#include "symmflow/exec/input_files.h"

#include <gtest/gtest.h>

#include "symmflow/exec/npy.h"
#include "symmflow/exec/npy_testing.h"
#include "symmflow/ir/parser.h"
#include "symmflow/kernels/factories.h"

namespace symmflow::exec {
namespace {

using testing::NpyTempDir;

ir::TensorType type_of(std::string_view type) {
  auto g = ir::parse_graph(fmt::format("graph @f(%x: {}) -> () {{\n  return\n}}", type));
  return g->inputs()[0]->type();
}

TEST(InputFiles, PrefersTheRanksOwnFileAndIsNulloptWithoutOne) {
  NpyTempDir dir;
  const auto type = type_of("f32[2]");
  EXPECT_FALSE(read_input_file(dir.dir().string(), "x", type, 0));
  write_npy(dir.path("x.npy"), kernels::full({2}, Scalar(1.0), DType::f32));
  write_npy(dir.path("x.rank1.npy"), kernels::full({2}, Scalar(2.0), DType::f32));
  EXPECT_EQ(read_input_file(dir.dir().string(), "x", type, 0)->data<float>()[0], 1.0f);
  EXPECT_EQ(read_input_file(dir.dir().string(), "x", type, 1)->data<float>()[0], 2.0f);
}

TEST(InputFiles, AFileThatDoesNotMatchTheSignatureIsAParseError) {
  NpyTempDir dir;
  write_npy(dir.path("x.npy"), kernels::full({2, 3}, Scalar(1.0), DType::f32));
  testing::expect_error([&] { read_input_file(dir.dir().string(), "x", type_of("f32[3, 2]"), 0); },
                        {"input %x: ", "x.npy holds f32[2, 3] but the signature says f32[3, 2]"});
  testing::expect_error([&] { read_input_file(dir.dir().string(), "x", type_of("i64[2, 3]"), 0); },
                        {"input %x: read_npy ", "expected dtype i64"});
  EXPECT_THROW(read_input_file(dir.dir().string(), "x", type_of("f32[3, 2]"), 0), ir::ParseError);
}

}  // namespace
}  // namespace symmflow::exec
