#include "symmflow/kernels/matmul.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include <omp.h>

#include "symmflow/kernels/copy.h"
#include "symmflow/kernels/shape_ops.h"
#include "symmflow/kernels/views.h"
#include "symmflow/kernels/kernel_testing.h"

extern "C" int openblas_get_num_threads(void);

namespace symmflow::kernels {
namespace {

using testing::from;
using testing::values;

// A = [[1,2,3],[4,5,6]], B = [[7,8],[9,10],[11,12]], A @ B = [[58,64],[139,154]].
Tensor A(DType t = DType::f32) { return from({1, 2, 3, 4, 5, 6}, {2, 3}, t); }
Tensor B(DType t = DType::f32) { return from({7, 8, 9, 10, 11, 12}, {3, 2}, t); }
const std::vector<double> kAB = {58, 64, 139, 154};

const DType kNumeric[] = {DType::f32, DType::f64, DType::bf16, DType::f16, DType::i32, DType::i64};

TEST(Matmul, MmEveryDType) {
  for (DType dt : kNumeric) {
    Tensor c = mm(A(dt), B(dt));
    EXPECT_EQ(c.dtype(), dt);
    EXPECT_EQ(c.sizes(), (Shape{2, 2}));
    // Integers below 256 are exact in bf16 and f16, so every dtype is exact here.
    EXPECT_EQ(values(c), kAB) << dtype_name(dt);
  }
  EXPECT_THROW(mm(A(DType::boolean), B(DType::boolean)), Error);
}

TEST(Matmul, TransposedAndStridedOperands) {
  // A and B as transposes of their transposes: column stride != 1 (BLAS Trans).
  Tensor at = transpose(from({1, 4, 2, 5, 3, 6}, {3, 2}), 0, 1);
  Tensor bt = transpose(from({7, 9, 11, 8, 10, 12}, {2, 3}), 0, 1);
  EXPECT_EQ(at.stride(1), 2);
  EXPECT_EQ(values(mm(at, bt)), kAB);
  EXPECT_EQ(values(mm(A(), bt)), kAB);
  EXPECT_EQ(values(mm(at, B())), kAB);
  // Every other row (row stride 6, BLAS lda), every other column (copied first).
  Tensor wide = from({1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0}, {2, 6});
  Tensor tall = from({7, 8, -1, -1, 9, 10, -1, -1, 11, 12, -1, -1}, {6, 2});
  Tensor as = slice(wide, 1, 0, {}, 2), bs = slice(tall, 0, 0, {}, 2);
  EXPECT_EQ(values(mm(as, bs)), kAB);
  for (DType dt : {DType::f64, DType::bf16, DType::i32}) {
    EXPECT_EQ(values(mm(to_dtype(at, dt).as_strided({2, 3}, {3, 1}, 0), bs.dtype() == dt ? bs : to_dtype(bs, dt))), kAB);
    Tensor at_dt = transpose(to_dtype(from({1, 4, 2, 5, 3, 6}, {3, 2}), dt), 0, 1);
    EXPECT_EQ(values(mm(at_dt, slice(to_dtype(tall, dt), 0, 0, {}, 2))), kAB) << dtype_name(dt);
  }
  // A broadcast (stride 0) operand.
  Tensor row = expand(from({1, 1, 1}, {1, 3}), {2, 3});
  EXPECT_EQ(values(mm(row, B())), (std::vector<double>{27, 30, 27, 30}));
}

TEST(Matmul, LargerAgainstReference) {
  const int64_t n = 17, k = 33, m = 9;
  std::vector<double> a(n * k), b(k * m);
  for (size_t i = 0; i < a.size(); ++i) a[i] = std::sin(double(i)) ;
  for (size_t i = 0; i < b.size(); ++i) b[i] = std::cos(double(i) * 0.7);
  for (DType dt : {DType::f32, DType::f64}) {
    auto got = values(mm(from(a, {n, k}, dt), from(b, {k, m}, dt)));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j) {
        double want = 0;
        for (int64_t q = 0; q < k; ++q) want += double(float(a[i * k + q])) * double(float(b[q * m + j]));
        EXPECT_NEAR(got[i * m + j], want, dt == DType::f32 ? 1e-4 : 1e-5);
      }
  }
}

TEST(Matmul, MatmulRankCombinations) {
  Tensor v3 = from({1, 2, 3}, {3}), w3 = from({4, 5, 6}, {3});
  Tensor dot = matmul(v3, w3);
  EXPECT_EQ(dot.dim(), 0);
  EXPECT_EQ(dot.item(), 32.0);
  Tensor mv = matmul(A(), from({1, 0, -1}, {3}));
  EXPECT_EQ(mv.sizes(), (Shape{2}));
  EXPECT_EQ(values(mv), (std::vector<double>{-2, -2}));
  Tensor vm = matmul(from({1, 1}, {2}), A());
  EXPECT_EQ(vm.sizes(), (Shape{3}));
  EXPECT_EQ(values(vm), (std::vector<double>{5, 7, 9}));
  EXPECT_EQ(values(matmul(A(), B())), kAB);

  Tensor A2 = stack({A(), from({2, 4, 6, 8, 10, 12}, {2, 3})});  // [2, 2, 3]: A, 2A
  Tensor r32 = matmul(A2, B());
  EXPECT_EQ(r32.sizes(), (Shape{2, 2, 2}));
  EXPECT_EQ(values(r32), (std::vector<double>{58, 64, 139, 154, 116, 128, 278, 308}));
  Tensor r31 = matmul(A2, from({1, 0, -1}, {3}));
  EXPECT_EQ(r31.sizes(), (Shape{2, 2}));
  EXPECT_EQ(values(r31), (std::vector<double>{-2, -2, -4, -4}));
  Tensor r13 = matmul(from({1, 1}, {2}), A2);
  EXPECT_EQ(r13.sizes(), (Shape{2, 3}));
  EXPECT_EQ(values(r13), (std::vector<double>{5, 7, 9, 10, 14, 18}));
  Tensor r23 = matmul(A(), stack({B(), B()}));
  EXPECT_EQ(r23.sizes(), (Shape{2, 2, 2}));
  EXPECT_EQ(values(r23), (std::vector<double>{58, 64, 139, 154, 58, 64, 139, 154}));
  // Broadcast batch dims: [2, 1, 2, 3] @ [3, 3, 2] -> [2, 3, 2, 2], (i+1)(j+1) A@B.
  Tensor a4 = unsqueeze(A2, 1);
  Tensor b3 = stack({B(), from({14, 16, 18, 20, 22, 24}, {3, 2}), from({21, 24, 27, 30, 33, 36}, {3, 2})});
  Tensor r = matmul(a4, b3);
  EXPECT_EQ(r.sizes(), (Shape{2, 3, 2, 2}));
  auto rv = values(r);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int e = 0; e < 4; ++e) EXPECT_EQ(rv[(i * 3 + j) * 4 + e], (i + 1) * (j + 1) * kAB[e]);
  // Transposed batch operand.
  Tensor bT = transpose(stack({transpose(B(), 0, 1), transpose(B(), 0, 1)}), 1, 2);  // [2, 3, 2]
  EXPECT_EQ(values(matmul(A2, bT)), values(r32));

  EXPECT_THROW(matmul(v3, from({1, 2}, {2})), Error);
  EXPECT_THROW(matmul(A(), A()), Error);
  EXPECT_THROW(matmul(from({1}, {}), A()), Error);
  EXPECT_THROW(matmul(A(), B(DType::f64)), Error);
  EXPECT_THROW(matmul(stack({A(), A(), A()}), stack({B(), B()})), Error);  // batch 3 vs 2
  EXPECT_EQ(values(matmul(to_dtype(A2, DType::i64), B(DType::i64))), values(r32));
  EXPECT_EQ(values(matmul(to_dtype(A2, DType::f16), B(DType::f16))), values(r32));
}

TEST(Matmul, OneBlasThreadByDefault) {
  mm(A(), B());  // the first BLAS call sets the thread count
  if (std::getenv("SYMMFLOW_BLAS_THREADS") == nullptr) {
    EXPECT_EQ(openblas_get_num_threads(), 1);
  }
}

// oneDNN runs on OpenMP: matmul sets its thread count for the call only, so other
// OpenMP code in the process (a torch beside symmflow) keeps its own setting.
TEST(Matmul, LeavesTheCallersOpenMPThreadCountAlone) {
  const int before = omp_get_max_threads();
  omp_set_num_threads(3);
  mm(A(), B());
  EXPECT_EQ(omp_get_max_threads(), 3);
  omp_set_num_threads(before);
}

// f32 through oneDNN at a size its blocked kernels use: close to a double
// reference, and the same bits on every call (what eager vs compiled relies on).
TEST(Matmul, F32GemmIsAccurateAndRepeatable) {
  const int64_t m = 67, k = 129, n = 45;
  std::vector<double> va(size_t(m * k)), vb(size_t(k * n));
  for (size_t i = 0; i < va.size(); ++i) va[i] = std::sin(double(i));
  for (size_t i = 0; i < vb.size(); ++i) vb[i] = std::cos(double(i) * 0.3);
  Tensor a = from(va, {m, k}), b = from(vb, {k, n});
  Tensor c = mm(a, b);
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double want = 0;
      for (int64_t q = 0; q < k; ++q) want += double(pa[i * k + q]) * double(pb[q * n + j]);
      ASSERT_NEAR(c.data<float>()[i * n + j], want, 1e-4) << i << "," << j;
    }
  for (int r = 0; r < 3; ++r) {
    Tensor again = mm(a, b);
    EXPECT_EQ(std::memcmp(again.data_ptr(), c.data_ptr(), c.nbytes()), 0);
  }
}

TEST(Matmul, IntegerOverflowWraps) {
  const double big = 4611686018427387904.0;  // 2^62
  Tensor a = from({big, big}, {1, 2}, DType::i64), b = from({2, 2}, {2, 1}, DType::i64);
  // 2^62 * 2 * 2 = 2^65 wraps to 0 in i64.
  EXPECT_EQ(mm(a, b).data<int64_t>()[0], 0);
  Tensor c = from({65536, 65536}, {1, 2}, DType::i32), d = from({32768, 32768}, {2, 1}, DType::i32);
  EXPECT_EQ(mm(c, d).data<int32_t>()[0], 0);  // 2^32 wraps to 0 in i32
}

TEST(Matmul, Bmm) {
  Tensor A2 = stack({A(), from({2, 4, 6, 8, 10, 12}, {2, 3})});
  Tensor B2 = stack({B(), B()});
  Tensor r = bmm(A2, B2);
  EXPECT_EQ(r.sizes(), (Shape{2, 2, 2}));
  EXPECT_EQ(values(r), (std::vector<double>{58, 64, 139, 154, 116, 128, 278, 308}));
  EXPECT_THROW(bmm(A2, stack({B(), B(), B()})), Error);
  EXPECT_THROW(bmm(A(), B()), Error);
  EXPECT_THROW(bmm(A2, stack({A(), A()})), Error);
}

TEST(Matmul, MmErrors) {
  try {
    mm(from(std::vector<double>(6, 1), {2, 3}), Tensor::empty({4, 5}));
    FAIL();
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("mm: mat1 f32[2, 3] and mat2 f32[4, 5] cannot be multiplied (3 != 4)"),
              std::string::npos)
        << msg;
  }
  EXPECT_THROW(mm(A(), from({1, 2, 3}, {3})), Error);
  EXPECT_THROW(mm(A(), B(DType::f64)), Error);
}

TEST(Matmul, Addmm) {
  Tensor ones = from({1, 1, 1, 1}, {2, 2});
  Tensor r = addmm(ones, A(), B(), Scalar(2.0), Scalar(0.5));
  EXPECT_EQ(values(r), (std::vector<double>{31, 34, 71.5, 79}));
  Tensor bias = from({10, 20}, {2});
  EXPECT_EQ(values(addmm(bias, A(), B())), (std::vector<double>{68, 84, 149, 174}));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor bad = from({nan, nan, nan, nan}, {2, 2});
  EXPECT_EQ(values(addmm(bad, A(), B(), Scalar(0.0))), kAB);  // beta 0: self not read
  for (DType dt : {DType::f64, DType::i32, DType::i64, DType::f16}) {
    Tensor ri = addmm(from({1, 1, 1, 1}, {2, 2}, dt), A(dt), B(dt), Scalar(int64_t(2)), Scalar(int64_t(3)));
    EXPECT_EQ(ri.dtype(), dt);
    std::vector<double> want = {176, 194, 419, 464};
    auto got = values(ri);
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(got[i], want[i], dt == DType::f16 ? 0.25 : 0) << dtype_name(dt);
  }
  // Transposed mat2.
  Tensor bt = transpose(from({7, 9, 11, 8, 10, 12}, {2, 3}), 0, 1);
  EXPECT_EQ(values(addmm(bias, A(), bt)), (std::vector<double>{68, 84, 149, 174}));
  EXPECT_THROW(addmm(from({1, 2, 3}, {3}), A(), B()), Error);   // does not broadcast
  EXPECT_THROW(addmm(bias, A(), A()), Error);
  EXPECT_THROW(addmm(from({1, 2}, {2}, DType::f64), A(), B()), Error);
}

// Attention's scores: beta * bias + alpha * (q @ k^T), bias broadcast.
TEST(Matmul, Baddbmm) {
  Tensor A2 = stack({A(), from({2, 4, 6, 8, 10, 12}, {2, 3})});
  Tensor B2 = stack({B(), B()});
  Tensor bias = from({1, 2}, {2});  // broadcasts over [2, 2, 2]
  EXPECT_EQ(values(baddbmm(bias, A2, B2, Scalar(2.0), Scalar(0.5))),
            (std::vector<double>{31, 36, 71.5, 81, 60, 68, 141, 158}));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor bad = from({nan}, {1, 1, 1});
  EXPECT_EQ(values(baddbmm(bad, A2, B2, Scalar(0.0))),  // beta 0: self not read
            (std::vector<double>{58, 64, 139, 154, 116, 128, 278, 308}));
  for (DType dt : {DType::f64, DType::bf16, DType::i64}) {
    Tensor r = baddbmm(from({1}, {1}, dt), stack({A(dt)}), stack({B(dt)}));
    EXPECT_EQ(r.dtype(), dt);
    EXPECT_EQ(values(r), (std::vector<double>{59, 65, 140, 155}));
  }
  Tensor m = baddbmm(Tensor::meta({2}, DType::f32), Tensor::meta({3, 4, 5}, DType::f32),
                     Tensor::meta({3, 5, 2}, DType::f32));
  EXPECT_TRUE(m.is_meta());
  EXPECT_EQ(m.sizes(), (Shape{3, 4, 2}));
  EXPECT_THROW(baddbmm(bias, A(), B()), Error);                    // not 3-D
  EXPECT_THROW(baddbmm(bias, A2, stack({B(), B(), B()})), Error);  // batch sizes differ
  EXPECT_THROW(baddbmm(from({1, 2, 3}, {3}), A2, B2), Error);      // does not broadcast
  EXPECT_THROW(baddbmm(from({1, 2}, {2}, DType::f64), A2, B2), Error);
}

TEST(Matmul, EmptyDims) {
  Tensor z = mm(Tensor::empty({2, 0}), Tensor::empty({0, 3}));
  EXPECT_EQ(z.sizes(), (Shape{2, 3}));
  EXPECT_EQ(values(z), std::vector<double>(6, 0.0));
  EXPECT_EQ(mm(Tensor::empty({0, 3}), B()).sizes(), (Shape{0, 2}));
  Tensor s = addmm(from({1, 2, 3}, {3}), Tensor::empty({2, 0}), Tensor::empty({0, 3}), Scalar(2.0));
  EXPECT_EQ(values(s), (std::vector<double>{2, 4, 6, 2, 4, 6}));
  EXPECT_EQ(matmul(Tensor::empty({0}), Tensor::empty({0})).item(), 0.0);
  Tensor f = matmul(Tensor::empty({2, 3, 0}), Tensor::empty({0, 4}));
  EXPECT_EQ(f.sizes(), (Shape{2, 3, 4}));
  EXPECT_EQ(values(f), std::vector<double>(24, 0.0));
  EXPECT_EQ(values(linear(Tensor::empty({2, 0}), Tensor::empty({3, 0}), from({1, 2, 3}, {3}))),
            (std::vector<double>{1, 2, 3, 1, 2, 3}));
  EXPECT_EQ(linear(Tensor::empty({0, 5, 3}), Tensor::empty({2, 3})).sizes(), (Shape{0, 5, 2}));
}

TEST(Matmul, Linear) {
  Tensor w = from({7, 9, 11, 8, 10, 12}, {2, 3});  // B^T
  EXPECT_EQ(values(linear(A(), w)), kAB);
  Tensor bias = from({0.5, -1}, {2});
  EXPECT_EQ(values(linear(A(), w, bias)), (std::vector<double>{58.5, 63, 139.5, 153}));
  Tensor x3 = stack({A(), A()});
  Tensor y3 = linear(x3, w, bias);
  EXPECT_EQ(y3.sizes(), (Shape{2, 2, 2}));
  EXPECT_EQ(values(y3), (std::vector<double>{58.5, 63, 139.5, 153, 58.5, 63, 139.5, 153}));
  Tensor y1 = linear(from({1, 2, 3}, {3}), w);
  EXPECT_EQ(y1.sizes(), (Shape{2}));
  EXPECT_EQ(values(y1), (std::vector<double>{58, 64}));
  EXPECT_EQ(values(linear(A(DType::bf16), to_dtype(w, DType::bf16), to_dtype(bias, DType::bf16))),
            (std::vector<double>{58.5, 63, 140, 153}));  // 139.5 ties to even: 140 in bf16
  EXPECT_EQ(values(linear(A(), w, Tensor())), kAB);  // undefined bias = None
  EXPECT_THROW(linear(A(), B()), Error);
  EXPECT_THROW(linear(A(), w, from({1, 2, 3}, {3})), Error);
}

TEST(Matmul, MetaGivesMeta) {
  Tensor a = Tensor::meta({4, 2, 3}, DType::bf16), b = Tensor::meta({3, 5}, DType::bf16);
  Tensor r = matmul(a, b);
  EXPECT_TRUE(r.is_meta());
  EXPECT_EQ(r.sizes(), (Shape{4, 2, 5}));
  EXPECT_EQ(r.dtype(), DType::bf16);
  EXPECT_EQ(matmul(Tensor::meta({3}, DType::f32), Tensor::meta({3}, DType::f32)).sizes(), Shape{});
  EXPECT_EQ(matmul(Tensor::meta({2, 1, 4, 3}, DType::f32), Tensor::meta({5, 3, 6}, DType::f32)).sizes(),
            (Shape{2, 5, 4, 6}));
  EXPECT_EQ(matmul(Tensor::meta({3}, DType::f32), Tensor::meta({2, 3, 4}, DType::f32)).sizes(),
            (Shape{2, 4}));
  EXPECT_EQ(mm(Tensor::meta({2, 3}, DType::f32), B()).sizes(), (Shape{2, 2}));
  EXPECT_TRUE(mm(Tensor::meta({2, 3}, DType::f32), B()).is_meta());
  EXPECT_EQ(bmm(a, Tensor::meta({4, 3, 7}, DType::bf16)).sizes(), (Shape{4, 2, 7}));
  EXPECT_TRUE(addmm(Tensor::meta({5}, DType::f32), Tensor::meta({2, 3}, DType::f32), B().as_strided({3, 5}, {0, 0}, 0)).is_meta());
  Tensor l = linear(Tensor::meta({8, 4, 3}, DType::f32), Tensor::meta({6, 3}, DType::f32),
                    Tensor::meta({6}, DType::f32));
  EXPECT_TRUE(l.is_meta());
  EXPECT_EQ(l.sizes(), (Shape{8, 4, 6}));
  EXPECT_THROW(matmul(a, Tensor::meta({4, 5}, DType::bf16)), Error);
  EXPECT_THROW(mm(Tensor::meta({2, 3}, DType::f32), Tensor::meta({2, 3}, DType::f32)), Error);
}

}  // namespace
}  // namespace symmflow::kernels
