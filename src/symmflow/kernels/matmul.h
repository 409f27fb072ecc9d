// Matrix products. f32 goes through oneDNN (dnnl_sgemm, as PyTorch 1.13 ships
// it), f64 through OpenBLAS (cblas_dgemm; oneDNN has no f64 gemm); transposed or
// row-strided operands are passed with a leading dimension, other layouts are made
// contiguous first. bf16/f16 are converted to f32, multiplied by sgemm and rounded
// back once, i32/i64 use a plain triple loop accumulating in i64 (wrapping to i32
// at the end). bool is rejected. Both operands must have the same dtype.
//
// Both libraries run with one thread (ranks share the cores) unless the
// environment variable SYMMFLOW_BLAS_THREADS says otherwise; it is read once, on
// first use. A fixed thread count gives the same bits on every run.
// On meta inputs every op returns a meta tensor of the result type.
//
//   Tensor y = matmul(x, w);            // x f32[B, T, K], w f32[K, N] -> f32[B, T, N]
//   Tensor z = linear(x, weight, bias); // x @ weight^T + bias
#pragma once
#include <optional>

#include "symmflow/core/scalar.h"
#include "symmflow/core/tensor.h"

namespace symmflow::kernels {

// [n, k] @ [k, m] -> [n, m].
Tensor mm(const Tensor& mat1, const Tensor& mat2);
// [b, n, k] @ [b, k, m] -> [b, n, m].
Tensor bmm(const Tensor& batch1, const Tensor& batch2);
// PyTorch's matmul: 1-D . 1-D is a dot product (0-D result); 2-D @ 1-D a
// matrix-vector product; 1-D @ 2-D treats the vector as a row; otherwise a batched
// product whose batch dims broadcast (a 1-D operand gets a dim added and removed).
Tensor matmul(const Tensor& a, const Tensor& b);
// beta * self + alpha * (mat1 @ mat2); self broadcasts to [n, m]. With beta == 0
// self is not read (NaN in self does not propagate), as in PyTorch and BLAS.
Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2,
             const Scalar& beta = Scalar(int64_t(1)), const Scalar& alpha = Scalar(int64_t(1)));
// beta * self + alpha * (batch1 @ batch2), batched addmm: [b, n, k] @ [b, k, m];
// self broadcasts to [b, n, m] and, with beta == 0, is not read.
Tensor baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2,
               const Scalar& beta = Scalar(int64_t(1)), const Scalar& alpha = Scalar(int64_t(1)));
// x [..., in] @ weight[out, in]^T (+ bias [out]) -> [..., out].
Tensor linear(const Tensor& x, const Tensor& weight,
              const std::optional<Tensor>& bias = std::nullopt);

}  // namespace symmflow::kernels
