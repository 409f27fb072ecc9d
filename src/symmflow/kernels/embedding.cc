#include "symmflow/kernels/embedding.h"

#include <vector>

#include "symmflow/kernels/copy.h"
#include "symmflow/kernels/indexing.h"

namespace symmflow::kernels {

Tensor embedding(const Tensor& weight, const Tensor& indices) {
  SF_CHECK(weight.dim() == 2, "embedding: 'weight' must be 2-D, got {}", weight.type_string());
  SF_CHECK(indices.dtype() == DType::i64 || indices.dtype() == DType::i32,
           "embedding: expected indices of dtype i64 or i32 (Long, Int), got {}", indices.type_string());
  Shape shape = indices.sizes();
  shape.push_back(weight.size(1));
  if (any_meta({&weight, &indices})) return Tensor::meta(shape, weight.dtype());
  Tensor out = Tensor::empty(shape, weight.dtype());
  if (indices.numel() == 0) return out;
  const Tensor w = contiguous(weight);
  const int64_t row_bytes = weight.size(1) * int64_t(weight.itemsize());
  const std::vector<int64_t> rows = index_values("embedding", indices, true);
  take_rows("embedding", "index out of range in self", rows.data(), indices.numel(),
            static_cast<const char*>(w.data_ptr()), 1, weight.size(0), row_bytes, static_cast<char*>(out.data_ptr()));
  return out;
}

}  // namespace symmflow::kernels
