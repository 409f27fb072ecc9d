#include "symmflow/kernels/copy.h"

#include <gtest/gtest.h>

#include "symmflow/kernels/kernel_testing.h"

namespace symmflow::kernels {
namespace {

using testing::iota;

TEST(Copy, BroadcastsAndConverts) {
  Tensor src = iota({3}, DType::i64);  // 0 1 2
  Tensor dst = Tensor::empty({2, 3}, DType::bf16);
  copy_(dst, src);
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 3; ++c) EXPECT_EQ(float(dst.data<BFloat16>()[r * 3 + c]), float(c));
}

TEST(Copy, ThroughTransposedView) {
  Tensor a = iota({2, 3});
  Tensor t = a.as_strided({3, 2}, {1, 3}, 0);  // a^T
  Tensor c = contiguous(t);
  std::vector<float> want = {0, 3, 1, 4, 2, 5};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(c.data<float>()[i], want[i]);
  // Write through the view: the base changes.
  Tensor col = a.as_strided({2}, {3}, 1);
  fill_(col, Scalar(9.5));
  EXPECT_EQ(a.data<float>()[1], 9.5f);
  EXPECT_EQ(a.data<float>()[4], 9.5f);
  EXPECT_EQ(a.data<float>()[0], 0.0f);
}

TEST(Copy, EveryDTypePair) {
  const DType all[] = {DType::f32, DType::f64, DType::bf16, DType::f16,
                       DType::i32, DType::i64, DType::boolean};
  for (DType s : all)
    for (DType d : all) {
      Tensor src = iota({4}, s);
      Tensor out = to_dtype(src, d);
      for (int i = 0; i < 4; ++i) {
        double want = s == DType::boolean || d == DType::boolean ? (i != 0) : i;
        double got = 0;
        SF_DISPATCH(d, got = double(out.data<T>()[i]));
        EXPECT_EQ(got, want)
            << dtype_name(s) << "->" << dtype_name(d);
      }
    }
}

TEST(Copy, MetaComputesNothing) {
  Tensor m = Tensor::meta({2, 3}, DType::f32);
  EXPECT_TRUE(clone(m).is_meta());
  EXPECT_THROW(copy_(m, Tensor::meta({4}, DType::f32)), Error);
}

}  // namespace
}  // namespace symmflow::kernels
