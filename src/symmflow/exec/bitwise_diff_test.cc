#include "symmflow/exec/bitwise_diff.h"

#include <gtest/gtest.h>

#include "symmflow/kernels/factories.h"

namespace symmflow::exec {
namespace {

TEST(BitwiseDiff, FirstDifferenceTellsSignedZerosAndTypesApart) {
  Tensor a = kernels::zeros({3}, DType::f32), b = kernels::zeros({3}, DType::f32);
  EXPECT_EQ(first_bitwise_difference(a, b), "");
  b.data<float>()[2] = -0.0f;  // equal as numbers, not as bits
  EXPECT_EQ(first_bitwise_difference(a, b), "index 2: eager 0, compiled -0");
  EXPECT_NE(first_bitwise_difference(a, kernels::zeros({4}, DType::f32)).find("types differ"), std::string::npos);
}

}  // namespace
}  // namespace symmflow::exec
