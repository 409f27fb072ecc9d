#include "symmflow/kernels/matmul.h"

#include <cblas.h>
#include <dnnl.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <mutex>
#include <type_traits>

#include "symmflow/core/params.h"
#include "symmflow/kernels/copy.h"
#include "symmflow/kernels/onednn_threads.h"
#include "symmflow/kernels/reduce.h"
#include "symmflow/kernels/views.h"

namespace symmflow::kernels {
namespace {

void init_blas_threads() {
  static std::once_flag once;
  std::call_once(once, [] {
    openblas_set_num_threads(int(params::integer("SYMMFLOW_BLAS_THREADS")));  // default 1
  });
}

// A stack of matrices [batch..., rows, cols]: the tensor whose data is read, the
// element offset of every matrix (batch in row-major order) and the row/col strides.
struct Operand {
  Tensor t;
  std::vector<int64_t> offs;
  int64_t rows, cols, rs, cs;
};

Operand operand(const Tensor& e) {
  Operand op{e, {}, e.size(-2), e.size(-1), e.stride(-2), e.stride(-1)};
  Shape bs(e.sizes().begin(), e.sizes().end() - 2), bst(e.strides().begin(), e.strides().end() - 2);
  for_each_offset(bs, bst, 0, [&](int64_t off) { op.offs.push_back(off); });
  return op;
}

// How BLAS can read a rows x cols matrix with these strides (row-major calls).
struct BlasLayout {
  bool ok = false;
  CBLAS_TRANSPOSE trans = CblasNoTrans;
  int64_t ld = 1;
};

BlasLayout blas_layout(const Operand& m) {
  const int64_t rows = m.rows, cols = m.cols;
  if ((m.cs == 1 || cols <= 1) && (rows <= 1 || m.rs >= std::max<int64_t>(1, cols)))
    return {true, CblasNoTrans, rows <= 1 ? std::max<int64_t>(1, cols) : m.rs};
  if ((m.rs == 1 || rows <= 1) && (cols <= 1 || m.cs >= std::max<int64_t>(1, rows)))
    return {true, CblasTrans, cols <= 1 ? std::max<int64_t>(1, rows) : m.cs};
  return {};
}

// f32: oneDNN's sgemm (the library PyTorch 1.13 ships with; measured against
// OpenBLAS in docs/performance.md "Kernels"), on SYMMFLOW_BLAS_THREADS OpenMP
// threads (onednn_threads.h), so ranks and eager/compiled runs get the same bits.
void gemm_call(float alpha, const float* a, CBLAS_TRANSPOSE ta, int64_t lda, const float* b,
               CBLAS_TRANSPOSE tb, int64_t ldb, float beta, float* c, int64_t m, int64_t n,
               int64_t k) {
  dnnl_status_t st;
  {
    OneDnnThreads threads;
    st = dnnl_sgemm(ta == CblasTrans ? 'T' : 'N', tb == CblasTrans ? 'T' : 'N', m, n, k, alpha, a,
                    lda, b, ldb, beta, c, std::max<int64_t>(n, 1));
  }
  SF_CHECK(st == dnnl_success, "matmul: oneDNN sgemm failed (status {}) for {}x{}x{}", int(st), m,
           k, n);
}
void gemm_call(double alpha, const double* a, CBLAS_TRANSPOSE ta, int64_t lda, const double* b,
               CBLAS_TRANSPOSE tb, int64_t ldb, double beta, double* c, int64_t m, int64_t n,
               int64_t k) {
  cblas_dgemm(CblasRowMajor, ta, tb, int(m), int(n), int(k), alpha, a, int(lda), b, int(ldb), beta,
              c, int(std::max<int64_t>(n, 1)));
}

// out (contiguous [batch..., M, N]) = alpha * A @ B + beta * out, for f32/f64.
template <typename T>
void blas_product(Operand a, Operand b, const Tensor& out, double alpha, double beta) {
  init_blas_threads();
  BlasLayout la = blas_layout(a), lb = blas_layout(b);
  if (!la.ok) {
    a = operand(clone(a.t));
    la = blas_layout(a);
  }
  if (!lb.ok) {
    b = operand(clone(b.t));
    lb = blas_layout(b);
  }
  const int64_t M = a.rows, K = a.cols, N = b.cols;
  if constexpr (std::is_same_v<T, double>)  // OpenBLAS takes int dims (oneDNN int64)
    SF_CHECK(M < INT_MAX && N < INT_MAX && K < INT_MAX && la.ld < INT_MAX && lb.ld < INT_MAX,
             "matmul: matrix dims {}x{}x{} exceed the BLAS integer range", M, K, N);
  const T* pa = static_cast<const T*>(a.t.data_ptr());
  const T* pb = static_cast<const T*>(b.t.data_ptr());
  T* pc = static_cast<T*>(out.data_ptr());
  for (size_t i = 0; i < a.offs.size(); ++i)
    gemm_call(T(alpha), pa + a.offs[i], la.trans, la.ld, pb + b.offs[i], lb.trans, lb.ld, T(beta),
              pc + int64_t(i) * M * N, M, N, K);
}

// Same for integers: a triple loop accumulating in i64.
template <typename T>
void int_product(const Operand& a, const Operand& b, const Tensor& out, int64_t alpha,
                 int64_t beta) {
  const int64_t M = a.rows, K = a.cols, N = b.cols;
  const T* pa = static_cast<const T*>(a.t.data_ptr());
  const T* pb = static_cast<const T*>(b.t.data_ptr());
  T* pc = static_cast<T*>(out.data_ptr());
  for (size_t bi = 0; bi < a.offs.size(); ++bi) {
    const T* A = pa + a.offs[bi];
    const T* B = pb + b.offs[bi];
    T* C = pc + int64_t(bi) * M * N;
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        // Unsigned arithmetic: overflow wraps (as in PyTorch) instead of being UB.
        uint64_t acc = 0;
        for (int64_t k = 0; k < K; ++k)
          acc += uint64_t(int64_t(A[i * a.rs + k * a.cs])) * uint64_t(int64_t(B[k * b.rs + j * b.cs]));
        uint64_t r = uint64_t(alpha) * acc;
        if (beta != 0) r += uint64_t(beta) * uint64_t(int64_t(C[i * N + j]));
        C[i * N + j] = T(int64_t(r));
      }
  }
}

// p[i] *= beta (the K == 0 case of addmm).
template <typename T>
void scale_(T* p, int64_t n, const Scalar& beta) {
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<T, bool>) p[i] = p[i] && beta.to_double() != 0.0;
    else if constexpr (std::is_integral_v<T>) p[i] = T(int64_t(p[i]) * beta.to_int());
    else if constexpr (std::is_same_v<T, double>) p[i] = p[i] * beta.to_double();
    else p[i] = T(float(double(float(p[i])) * beta.to_double()));
  }
}

// out = alpha * (a @ b) + beta * out. a: [batch..., M, K], b: [batch..., K, N], both
// already expanded to the same batch shape; out: contiguous [batch..., M, N]. With
// beta == 0, out's prior contents are ignored.
void product(const Tensor& a, const Tensor& b, const Tensor& out, const Scalar& alpha,
             const Scalar& beta) {
  Operand oa = operand(a), ob = operand(b);
  const bool use_beta = beta.to_double() != 0.0;
  if (out.numel() == 0) return;
  if (oa.cols == 0) {  // empty inner dim: the product is 0
    if (!use_beta) {
      zero_(out);
    } else {
      SF_DISPATCH(out.dtype(), scale_(out.data<T>(), out.numel(), beta));
    }
    return;
  }
  switch (out.dtype()) {
    case DType::f32:
      blas_product<float>(oa, ob, out, alpha.to_double(), use_beta ? beta.to_double() : 0.0);
      break;
    case DType::f64:
      blas_product<double>(oa, ob, out, alpha.to_double(), use_beta ? beta.to_double() : 0.0);
      break;
    case DType::bf16:
    case DType::f16: {
      // Multiply in f32, round once.
      Tensor out32 = use_beta ? to_dtype(out, DType::f32) : Tensor::empty(out.sizes(), DType::f32);
      blas_product<float>(operand(to_dtype(a, DType::f32)), operand(to_dtype(b, DType::f32)), out32,
                          alpha.to_double(), use_beta ? beta.to_double() : 0.0);
      copy_(out, out32);
      break;
    }
    case DType::i32:
      int_product<int32_t>(oa, ob, out, alpha.to_int(), use_beta ? beta.to_int() : 0);
      break;
    case DType::i64:
      int_product<int64_t>(oa, ob, out, alpha.to_int(), use_beta ? beta.to_int() : 0);
      break;
    case DType::boolean:
      fail("matmul: bool tensors are not supported");
  }
}

void check_dtypes(const char* op, const Tensor& a, const Tensor& b) {
  SF_CHECK(a.dtype() == b.dtype(), "{}: expected both operands to have the same dtype, got {} and {}",
           op, a.type_string(), b.type_string());
  SF_CHECK(a.dtype() != DType::boolean, "{}: bool tensors are not supported, got {} and {}", op,
           a.type_string(), b.type_string());
}

// Names the operands as PyTorch's schemas do (mat1/mat2, batch1/batch2, self/other).
struct Names {
  const char* op;
  const char* a;
  const char* b;
};

void check_inner(Names n, const Tensor& a, const Tensor& b, int64_t ka, int64_t kb) {
  SF_CHECK(ka == kb, "{}: {} {} and {} {} cannot be multiplied ({} != {})", n.op, n.a,
           a.type_string(), n.b, b.type_string(), ka, kb);
}

// a [batch..., M, K] @ b [batch..., K, N] with broadcasting batch dims.
Tensor batched(Names n, const Tensor& a, const Tensor& b) {
  check_inner(n, a, b, a.size(-1), b.size(-2));
  Shape ba(a.sizes().begin(), a.sizes().end() - 2), bb(b.sizes().begin(), b.sizes().end() - 2);
  Shape batch = broadcast_shapes(ba, bb);
  Shape sa = batch, sb = batch, so = batch;
  sa.insert(sa.end(), {a.size(-2), a.size(-1)});
  sb.insert(sb.end(), {b.size(-2), b.size(-1)});
  so.insert(so.end(), {a.size(-2), b.size(-1)});
  if (any_meta({&a, &b})) return Tensor::meta(so, a.dtype());
  Tensor out = Tensor::empty(so, a.dtype());
  product(expand(a, sa), expand(b, sb), out, Scalar(int64_t(1)), Scalar(int64_t(0)));
  return out;
}

}  // namespace

Tensor mm(const Tensor& mat1, const Tensor& mat2) {
  SF_CHECK(mat1.dim() == 2 && mat2.dim() == 2, "mm: expected 2-D tensors, got mat1 {} and mat2 {}",
           mat1.type_string(), mat2.type_string());
  check_dtypes("mm", mat1, mat2);
  return batched({"mm", "mat1", "mat2"}, mat1, mat2);
}

Tensor bmm(const Tensor& batch1, const Tensor& batch2) {
  SF_CHECK(batch1.dim() == 3 && batch2.dim() == 3,
           "bmm: expected 3-D tensors, got batch1 {} and batch2 {}", batch1.type_string(),
           batch2.type_string());
  check_dtypes("bmm", batch1, batch2);
  SF_CHECK(batch1.size(0) == batch2.size(0), "bmm: batch sizes differ: {} and {}",
           batch1.type_string(), batch2.type_string());
  return batched({"bmm", "batch1", "batch2"}, batch1, batch2);
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  const int64_t da = a.dim(), db = b.dim();
  SF_CHECK(da >= 1 && db >= 1, "matmul: both arguments need at least 1 dimension, got {} and {}",
           a.type_string(), b.type_string());
  check_dtypes("matmul", a, b);
  const Names n{"matmul", "self", "other"};
  check_inner(n, a, b, a.size(-1), db == 1 ? b.size(0) : b.size(-2));
  if (da == 1 && db == 1) {
    return view(batched(n, unsqueeze(a, 0), unsqueeze(b, 1)), {});
  }
  if (da == 2 && db == 1) return squeeze(batched(n, a, unsqueeze(b, 1)), -1);
  if (da == 1 && db == 2) return squeeze(batched(n, unsqueeze(a, 0), b), 0);
  if (da == 2 && db == 2) return batched(n, a, b);
  if (da >= 3 && db <= 2) {
    // Fold a's batch dims into its rows: one big gemm.
    Shape out(a.sizes().begin(), a.sizes().end() - 1);
    Tensor a2 = reshape(a, {numel_of(out), a.size(-1)});  // not -1: K may be 0
    Tensor r = batched(n, a2, db == 1 ? unsqueeze(b, 1) : b);
    if (db == 2) out.push_back(b.size(1));
    return reshape(r, out);
  }
  const Tensor a2 = da == 1 ? unsqueeze(a, 0) : a;
  const Tensor b2 = db == 1 ? unsqueeze(b, 1) : b;
  Tensor r = batched(n, a2, b2);
  if (da == 1) r = squeeze(r, -2);
  if (db == 1) r = squeeze(r, -1);
  return r;
}

namespace {

// beta * self + alpha * (a @ b) into a fresh [batch..., n, m]: addmm and baddbmm.
Tensor add_product(const char* op, const Tensor& self, const Tensor& a, const Tensor& b,
                   const Scalar& beta, const Scalar& alpha, Names n) {
  check_dtypes(op, a, b);
  SF_CHECK(self.dtype() == a.dtype(), "{}: expected self to have dtype {} like {}, got {}", op,
           dtype_name(a.dtype()), n.a, self.type_string());
  check_inner(n, a, b, a.size(-1), b.size(-2));
  Shape so(a.sizes().begin(), a.sizes().end() - 1);
  so.push_back(b.size(-1));
  SF_CHECK(broadcast_shapes(self.sizes(), so) == so,
           "{}: self {} does not broadcast to the product's shape {}", op, self.type_string(),
           shape_to_string(so));
  if (any_meta({&self, &a, &b})) return Tensor::meta(so, a.dtype());
  Tensor out = Tensor::empty(so, a.dtype());
  if (beta.to_double() != 0.0) copy_(out, self);
  product(a, b, out, alpha, beta);
  return out;
}

}  // namespace

Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta,
             const Scalar& alpha) {
  SF_CHECK(mat1.dim() == 2 && mat2.dim() == 2,
           "addmm: expected 2-D mat1 and mat2, got {} and {}", mat1.type_string(),
           mat2.type_string());
  return add_product("addmm", self, mat1, mat2, beta, alpha, {"addmm", "mat1", "mat2"});
}

Tensor baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
               const Scalar& alpha) {
  SF_CHECK(batch1.dim() == 3 && batch2.dim() == 3,
           "baddbmm: expected 3-D batch1 and batch2, got {} and {}", batch1.type_string(),
           batch2.type_string());
  SF_CHECK(batch1.size(0) == batch2.size(0), "baddbmm: batch sizes differ: {} and {}",
           batch1.type_string(), batch2.type_string());
  return add_product("baddbmm", self, batch1, batch2, beta, alpha, {"baddbmm", "batch1", "batch2"});
}

Tensor linear(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias) {
  SF_CHECK(x.dim() >= 1 && weight.dim() == 2,
           "linear: expected input [..., in] and weight [out, in], got {} and {}",
           x.type_string(), weight.type_string());
  SF_CHECK(x.size(-1) == weight.size(1),
           "linear: input {} has {} features but weight {} expects {}", x.type_string(),
           x.size(-1), weight.type_string(), weight.size(1));
  Shape out(x.sizes().begin(), x.sizes().end() - 1);
  Tensor x2 = reshape(x, {numel_of(out), x.size(-1)});  // [rows, in]; a 1-D x is one row
  Tensor wt = t(weight);
  // An undefined bias is None, as the op layer may pass it.
  Tensor y = bias && bias->defined() ? addmm(*bias, x2, wt) : mm(x2, wt);
  out.push_back(weight.size(0));
  return reshape(y, out);
}

}  // namespace symmflow::kernels
