#include "symmflow/kernels/embedding.h"

#include <cstring>

#include "symmflow/kernels/copy.h"

namespace symmflow::kernels {
namespace {

template <typename I>
void gather_rows(const I* idx, int64_t n, const char* w, int64_t rows, int64_t row_bytes, char* out) {
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = int64_t(idx[i]);
    SF_CHECK(r >= 0 && r < rows, "embedding: index out of range in self (index {} of a weight with {} rows)",
             r, rows);
    std::memcpy(out + i * row_bytes, w + r * row_bytes, size_t(row_bytes));
  }
}

}  // namespace

Tensor embedding(const Tensor& weight, const Tensor& indices) {
  SF_CHECK(weight.dim() == 2, "embedding: 'weight' must be 2-D, got {}", weight.type_string());
  SF_CHECK(indices.dtype() == DType::i64 || indices.dtype() == DType::i32,
           "embedding: expected indices of dtype i64 or i32 (Long, Int), got {}", indices.type_string());
  Shape shape = indices.sizes();
  shape.push_back(weight.size(1));
  if (any_meta({&weight, &indices})) return Tensor::meta(shape, weight.dtype());
  Tensor out = Tensor::empty(shape, weight.dtype());
  if (indices.numel() == 0) return out;
  const Tensor w = contiguous(weight), idx = contiguous(indices);
  const int64_t row_bytes = weight.size(1) * int64_t(weight.itemsize());
  const char* wp = static_cast<const char*>(w.data_ptr());
  char* op = static_cast<char*>(out.data_ptr());
  if (idx.dtype() == DType::i64) gather_rows(idx.data<int64_t>(), idx.numel(), wp, weight.size(0), row_bytes, op);
  else gather_rows(idx.data<int32_t>(), idx.numel(), wp, weight.size(0), row_bytes, op);
  return out;
}

}  // namespace symmflow::kernels
