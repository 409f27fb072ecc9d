#include "symmflow/kernels/loss.h"

#include <vector>

#include "symmflow/kernels/copy.h"
#include "symmflow/kernels/pointwise.h"
#include "symmflow/kernels/reduce.h"
#include "symmflow/kernels/type_promotion.h"

namespace symmflow::kernels {
namespace {

void check_reduction(const char* op, int64_t reduction) {
  SF_CHECK(reduction >= 0 && reduction <= 2, "{}: expected reduction 0 (none), 1 (mean) or 2 (sum), got {}", op,
           reduction);
}

// A tensor's values as doubles, row-major.
std::vector<double> as_doubles(const Tensor& t) {
  const Tensor d = to_dtype(contiguous(t), DType::f64);
  return std::vector<double>(d.data<double>(), d.data<double>() + d.numel());
}

// A tensor of `dtype` and `shape` holding `v` (rounded once from double).
Tensor from_doubles(const std::vector<double>& v, const Shape& shape, DType dtype) {
  Tensor d = Tensor::empty(shape, DType::f64);
  std::copy(v.begin(), v.end(), d.data<double>());
  return to_dtype(d, dtype);
}

}  // namespace

std::pair<Tensor, Tensor> nll_loss_forward(const Tensor& self, const Tensor& target,
                                           const std::optional<Tensor>& weight, int64_t reduction,
                                           int64_t ignore_index) {
  const char* op = "nll_loss_forward";
  check_reduction(op, reduction);
  SF_CHECK(self.dim() >= 1 && self.dim() <= 2, "{}: input tensor should be 1D or 2D, got {}", op, self.type_string());
  SF_CHECK(target.dim() <= 1, "{}: 0D or 1D target tensor expected, multi-target not supported, got {}", op,
           target.type_string());
  const bool no_batch = self.dim() == 1 && target.dim() == 0;
  SF_CHECK(no_batch || self.size(0) == target.size(0), "{}: size mismatch (got input: {}, target: {})", op,
           shape_to_string(self.sizes()), shape_to_string(target.sizes()));
  SF_CHECK(is_floating(self.dtype()), "{}: \"nll_loss_out_frame\" not implemented for {}", op, self.type_string());
  SF_CHECK(target.dtype() == DType::i64, "{}: expected scalar type Long but found {}", op, target.type_string());
  const int64_t classes = self.size(-1);
  if (weight) {
    SF_CHECK(weight->numel() == classes,
             "{}: weight tensor should be defined either for all {} classes or no classes but got weight tensor "
             "of shape: {}", op, classes, shape_to_string(weight->sizes()));
    SF_CHECK(weight->dtype() == self.dtype(), "{}: expected scalar type {} but found {}", op,
             dtype_name(self.dtype()), weight->type_string());
  }
  const bool batch_none = reduction == 0 && self.dim() == 2;
  const Shape out_shape = batch_none ? Shape{self.size(0)} : Shape{};
  const DType dt = self.dtype();
  if (self.is_meta() || target.is_meta() || (weight && weight->is_meta()))
    return {Tensor::meta(out_shape, dt), Tensor::meta({}, dt)};
  const std::vector<double> x = as_doubles(self), w = weight ? as_doubles(*weight) : std::vector<double>();
  const Tensor t = contiguous(target);
  const int64_t n = t.numel();
  std::vector<double> losses(static_cast<size_t>(n));
  double sum = 0, total = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = t.data<int64_t>()[i];
    if (c == ignore_index) continue;
    SF_CHECK(c >= 0 && c < classes, "{}: Target {} is out of bounds.", op, c);
    const double wc = weight ? w[size_t(c)] : 1.0;
    losses[size_t(i)] = -wc * x[size_t(i * classes + c)];
    sum += losses[size_t(i)];
    total += wc;
  }
  if (batch_none) return {from_doubles(losses, out_shape, dt), from_doubles({0.0}, {}, dt)};
  return {from_doubles({reduction == 1 ? sum / total : sum}, {}, dt), from_doubles({total}, {}, dt)};
}

Tensor mse_loss(const Tensor& self, const Tensor& target, int64_t reduction) {
  check_reduction("mse_loss", reduction);
  const DType r = result_type({self, target});
  SF_CHECK(is_floating(r), "mse_loss: \"mse_cpu\" not implemented for {}", dtype_name(r));
  // Each square in float (bf16/f16) or the dtype itself, rounded once, as PyTorch.
  const DType c = r == DType::bf16 || r == DType::f16 ? DType::f32 : r;
  const Tensor d = sub(to_dtype(self, c), to_dtype(target, c));
  const Tensor loss = to_dtype(mul(d, d), r);
  if (reduction == 0) return loss;
  return reduction == 1 ? mean(loss) : sum(loss);
}

}  // namespace symmflow::kernels
