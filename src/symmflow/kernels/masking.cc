#include "symmflow/kernels/masking.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "symmflow/kernels/copy.h"
#include "symmflow/kernels/factories.h"
#include "symmflow/kernels/pointwise.h"
#include "symmflow/kernels/type_promotion.h"

namespace symmflow::kernels {
namespace {

void check_mask(const char* op, const Tensor& mask) {
  SF_CHECK(mask.dtype() == DType::boolean, "{}: only supports boolean masks, but got mask {}", op,
           mask.type_string());
}

// The fill value as a 0-dim tensor of self's dtype, so that where() neither
// promotes nor rounds twice.
Tensor fill_value(const char* op, const Tensor& self, const Scalar& value) {
  check_scalar_fits(op, value, self.dtype());
  return full({}, value, self.dtype(), self.is_meta());
}

Scalar tensor_value(const char* op, const Tensor& value) {
  SF_CHECK(value.dim() == 0,
           "{}: only supports a 0-dimensional value tensor, but got tensor with {} dimension(s)", op,
           value.dim());
  // A meta value has no number; any one stands for it (only types are computed).
  if (value.is_meta()) return Scalar(int64_t(0));
  Scalar s;
  SF_DISPATCH(value.dtype(), {  // exact: an i64 value does not go through double
    const T v = value.data<T>()[0];
    if constexpr (std::is_same_v<T, bool>) s = Scalar(v);
    else if constexpr (std::is_integral_v<T>) s = Scalar(int64_t(v));
    else s = Scalar(double(v));
  });
  return s;
}

// Zeroes, in the contiguous out, each row's columns outside the kept band.
Tensor band(const char* op, const Tensor& self, int64_t diagonal, bool upper) {
  SF_CHECK(self.dim() >= 2, "{}: expected a tensor with at least 2 dimensions, got {}", op,
           self.type_string());
  Tensor out = clone(self);
  if (out.is_meta() || out.numel() == 0) return out;
  const int64_t rows = self.size(-2), cols = self.size(-1), item = int64_t(self.itemsize());
  char* p = static_cast<char*>(out.data_ptr());
  // All-zero bytes are 0 (+0.0, false) in every dtype.
  for (int64_t m = 0; m < out.numel() / (rows * cols); ++m) {
    for (int64_t i = 0; i < rows; ++i) {
      char* row = p + (m * rows + i) * cols * item;
      // triu keeps j >= i + k: zero [0, i + k); tril keeps j <= i + k: zero (i + k, cols).
      const int64_t edge = std::clamp<int64_t>(upper ? i + diagonal : i + diagonal + 1, 0, cols);
      if (upper) std::memset(row, 0, size_t(edge * item));
      else std::memset(row + edge * item, 0, size_t((cols - edge) * item));
    }
  }
  return out;
}

}  // namespace

Tensor masked_fill(const Tensor& self, const Tensor& mask, const Scalar& value) {
  check_mask("masked_fill", mask);
  return where(mask, fill_value("masked_fill", self, value), self);
}

Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value) {
  return masked_fill(self, mask, tensor_value("masked_fill", value));
}

const Tensor& masked_fill_(const Tensor& self, const Tensor& mask, const Scalar& value) {
  check_mask("masked_fill_", mask);
  const Shape shape = broadcast_shapes(self.sizes(), mask.sizes());
  SF_CHECK(shape == self.sizes(), "masked_fill_: output with shape {} doesn't match the broadcast shape {}",
           shape_to_string(self.sizes()), shape_to_string(shape));
  return where_out(self, mask, fill_value("masked_fill_", self, value), self);
}

const Tensor& masked_fill_(const Tensor& self, const Tensor& mask, const Tensor& value) {
  return masked_fill_(self, mask, tensor_value("masked_fill_", value));
}

Tensor triu(const Tensor& self, int64_t diagonal) { return band("triu", self, diagonal, true); }
Tensor tril(const Tensor& self, int64_t diagonal) { return band("tril", self, diagonal, false); }

}  // namespace symmflow::kernels
