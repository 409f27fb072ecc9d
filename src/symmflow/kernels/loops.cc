#include "symmflow/kernels/loops.h"

namespace symmflow::kernels {

std::vector<int64_t> broadcast_byte_strides(const Tensor& t, std::span<const int64_t> shape) {
  const int64_t out_dims = int64_t(shape.size()), in_dims = t.dim();
  SF_CHECK(in_dims <= out_dims, "cannot broadcast {} to {}", t.type_string(), shape_to_string(shape));
  std::vector<int64_t> out(out_dims, 0);
  const int64_t isz = int64_t(t.itemsize());
  for (int64_t i = 0; i < in_dims; ++i) {
    int64_t d = out_dims - in_dims + i;
    int64_t s = t.sizes()[i];
    SF_CHECK(s == shape[d] || s == 1, "cannot broadcast {} to {}", t.type_string(),
             shape_to_string(shape));
    out[d] = (s == 1 && shape[d] != 1) ? 0 : t.strides()[i] * isz;
  }
  return out;
}

}  // namespace symmflow::kernels
