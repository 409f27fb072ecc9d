// Comparisons of pointwise.h: eq, ne, lt, le, gt, ge.
#include <gtest/gtest.h>

#include <limits>

#include "symmflow/kernels/pointwise.h"
#include "symmflow/kernels/pointwise_testing.h"

namespace symmflow::kernels {
namespace {

using namespace testing;
using V = std::vector<double>;

TEST(PointwiseCompare, EveryOpEveryDType) {
  for (DType t : kAllDTypes) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    const bool b = t == DType::boolean;
    Tensor x = b ? make1({0, 1, 1}, t) : make1({1, 2, 3}, t);
    Tensor y = b ? make1({1, 1, 0}, t) : make1({2, 2, 2}, t);
    Tensor r = eq(x, y);
    EXPECT_EQ(r.dtype(), DType::boolean);
    EXPECT_EQ(values(r), V({0, 1, 0}));
    EXPECT_EQ(values(ne(x, y)), V({1, 0, 1}));
    EXPECT_EQ(values(lt(x, y)), V({1, 0, 0}));
    EXPECT_EQ(values(le(x, y)), V({1, 1, 0}));
    EXPECT_EQ(values(gt(x, y)), V({0, 0, 1}));
    EXPECT_EQ(values(ge(x, y)), V({0, 1, 1}));
    if (!b) {
      EXPECT_EQ(values(lt(x, 2)), V({1, 0, 0}));
      EXPECT_EQ(values(ge(x, 2)), V({0, 1, 1}));
    }
  }
}

TEST(PointwiseCompare, PromotedBeforeComparing) {
  Tensor i = make1({1, 2, 3}, DType::i32);
  EXPECT_EQ(values(lt(i, 2.5)), V({1, 1, 0}));  // compared in f32, not truncated to 2
  EXPECT_EQ(values(eq(i, 2.0)), V({0, 1, 0}));
  EXPECT_EQ(values(eq(i, make1({1, 2, 4}, DType::i64))), V({1, 1, 0}));
  // A bf16 tensor against a 0-dim f32: the scalar is cast to bf16 (the common dtype).
  Tensor h = make1({1.0078125}, DType::bf16);
  EXPECT_EQ(values(eq(h, make({}, {1.01}, DType::f32))), V({1}));  // bf16(1.01) == 1.0078125
  EXPECT_EQ(values(eq(h, make1({1.01}, DType::f32))), V({0}));      // both dim > 0: f32
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor n = make1({nan, 1});
  EXPECT_EQ(values(eq(n, n)), V({0, 1}));
  EXPECT_EQ(values(ne(n, n)), V({1, 0}));
  EXPECT_EQ(values(lt(n, 5)), V({0, 1}));
}

TEST(PointwiseCompare, BroadcastViewsOutAndMeta) {
  Tensor m = iota({3, 4});
  Tensor c = gt(m.as_strided({4, 3}, {1, 4}, 0), make({4, 1}, {0, 1, 2, 3}));
  ASSERT_EQ(c.sizes(), Shape({4, 3}));
  EXPECT_EQ(values(c), V({0, 1, 1, 0, 1, 1, 0, 1, 1, 0, 1, 1}));
  Tensor out = Tensor::empty({3}, DType::f32);  // bool is castable to anything
  le_out(out, make1({1, 2, 3}), 2);
  EXPECT_EQ(values(out), V({1, 1, 0}));
  Tensor bout = Tensor::empty({0}, DType::boolean);
  ne_out(bout, make1({1, 2, 3}), make1({1, 0, 3}));
  EXPECT_EQ(values(bout), V({0, 1, 0}));
  Tensor meta = lt(Tensor::meta({2, 1}, DType::i32), Tensor::meta({3}, DType::bf16));
  EXPECT_TRUE(meta.is_meta());
  EXPECT_EQ(meta.dtype(), DType::boolean);
  EXPECT_EQ(meta.sizes(), Shape({2, 3}));
  EXPECT_THROW(eq_out(Tensor::empty({2}, DType::boolean), make1({1, 2, 3}), 1), Error);
}

}  // namespace
}  // namespace symmflow::kernels
