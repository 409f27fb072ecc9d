#include "symmflow/kernels/loops.h"

namespace symmflow::kernels {

std::vector<int64_t> broadcast_byte_strides(const Tensor& t, std::span<const int64_t> shape) {
  const int64_t nd = int64_t(shape.size()), td = t.dim();
  SF_CHECK(td <= nd, "cannot broadcast {} to {}", t.type_string(), shape_to_string(shape));
  std::vector<int64_t> out(nd, 0);
  const int64_t isz = int64_t(t.itemsize());
  for (int64_t i = 0; i < td; ++i) {
    int64_t d = nd - td + i;
    int64_t s = t.sizes()[i];
    SF_CHECK(s == shape[d] || s == 1, "cannot broadcast {} to {}", t.type_string(),
             shape_to_string(shape));
    out[d] = (s == 1 && shape[d] != 1) ? 0 : t.strides()[i] * isz;
  }
  return out;
}

std::vector<int64_t> byte_strides(const Tensor& t) {
  std::vector<int64_t> out(t.strides().begin(), t.strides().end());
  for (auto& s : out) s *= int64_t(t.itemsize());
  return out;
}

}  // namespace symmflow::kernels
