// The non-template plumbing of the pointwise kernels (pointwise_impl.h). The ops
// themselves are in unary.cc, binary.cc and compare.cc.
#include "symmflow/kernels/pointwise_impl.h"

namespace symmflow::kernels::pointwise_detail {

namespace {

// [first, last) byte range touched by a non-empty view.
std::pair<const char*, const char*> byte_extent(const Tensor& t) {
  const char* p = static_cast<const char*>(t.data_ptr());
  int64_t lo = 0, hi = 0;
  for (int64_t d = 0; d < t.dim(); ++d) {
    int64_t span = (t.sizes()[d] - 1) * t.strides()[d] * int64_t(t.itemsize());
    (span < 0 ? lo : hi) += span;
  }
  return {p + lo, p + hi + int64_t(t.itemsize())};
}

bool may_overlap(const Tensor& a, const Tensor& b) {
  if (!a.shares_storage(b) || a.numel() == 0 || b.numel() == 0) return false;
  auto [a0, a1] = byte_extent(a);
  auto [b0, b1] = byte_extent(b);
  return a0 < b1 && b0 < a1;
}

bool same_layout(const Tensor& a, const Tensor& b) {
  return a.data_ptr() == b.data_ptr() && a.dtype() == b.dtype() && a.sizes() == b.sizes() &&
         a.strides() == b.strides();
}

}  // namespace

Tensor prepare_input(const Tensor& t, DType dtype, const Tensor& dst) {
  if (t.dtype() != dtype) return to_dtype(t, dtype);  // a fresh tensor: no overlap
  if (may_overlap(t, dst) && !same_layout(t, dst)) return clone(t);
  return t;
}

Tensor scalar_tensor(const Scalar& s, DType dtype) {
  Tensor t = Tensor::empty({}, dtype);
  fill_(t, s);
  return t;
}

Shape broadcast_operands(std::initializer_list<Operand> ops) {
  Shape shape;
  for (const Operand& o : ops)
    if (o.is_tensor()) shape = broadcast_shapes(shape, o.tensor->sizes());
  return shape;
}

bool any_meta_operand(std::initializer_list<Operand> ops) {
  for (const Operand& o : ops)
    if (o.is_tensor() && o.tensor->is_meta()) return true;
  return false;
}

void prepare_dest(std::string_view op, const Tensor& dst, bool inplace, const Shape& shape,
                  DType result) {
  check_can_cast(op, result, dst.dtype());
  if (inplace) {
    SF_CHECK(dst.sizes() == shape, "{}: output with shape {} doesn't match the broadcast shape {}",
             op, shape_to_string(dst.sizes()), shape_to_string(shape));
  } else if (dst.sizes() != shape) {
    SF_CHECK(dst.numel() == 0, "{}: out= has shape {}, expected the result shape {}", op,
             shape_to_string(dst.sizes()), shape_to_string(shape));
    Tensor handle = dst;  // set_ changes the shared TensorImpl: every handle sees it
    if (dst.is_meta()) {
      handle.set_(nullptr, shape, contiguous_strides(shape), 0);
    } else {
      Tensor fresh = Tensor::empty(shape, dst.dtype());
      handle.set_(fresh.storage(), shape, fresh.strides(), 0);
    }
  }
  for (int64_t d = 0; d < dst.dim(); ++d)
    SF_CHECK(dst.strides()[d] != 0 || dst.sizes()[d] <= 1,
             "{}: unsupported operation: more than one element of the written-to tensor {} "
             "refers to a single memory location (stride 0 in dim {}); clone() it first",
             op, dst.type_string(), d);
}

}  // namespace symmflow::kernels::pointwise_detail
