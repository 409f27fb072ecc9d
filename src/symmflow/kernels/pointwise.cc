// The non-template plumbing of the pointwise kernels (pointwise_impl.h). The ops
// themselves are in unary.cc, binary.cc and compare.cc.
#include "symmflow/kernels/pointwise_impl.h"

#include <algorithm>
#include <vector>

#include "symmflow/core/layout.h"
#include "symmflow/kernels/factories.h"

namespace symmflow::kernels::pointwise_detail {

namespace {

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
  // Tensors of one shape (the common case) need no broadcasting: that shape.
  const Shape* first = nullptr;
  bool same = true;
  for (const Operand& o : ops)
    if (o.is_tensor()) {
      if (first == nullptr) first = &o.tensor->sizes();
      else same = same && o.tensor->sizes() == *first;
    }
  if (same) return first ? *first : Shape{};
  Shape shape;
  for (const Operand& o : ops)
    if (o.is_tensor()) shape = broadcast_shapes(shape, o.tensor->sizes());
  return shape;
}

Tensor fresh_result(const Shape& shape, DType dtype, bool meta, std::initializer_list<Operand> inputs) {
  // Operands with row-major strides (the common case) give a row-major result
  // under every rule of core/layout.h: no geometry to build.
  const bool row_major = std::all_of(inputs.begin(), inputs.end(), [](const Operand& o) {
    return !o.is_tensor() || has_contiguous_strides(o.tensor->sizes(), o.tensor->strides());
  });
  if (row_major) return empty(shape, dtype, meta);
  std::vector<ViewGeometry> operands;
  operands.reserve(inputs.size());
  for (const Operand& o : inputs) operands.push_back(o.is_tensor() ? geometry(*o.tensor) : ViewGeometry{});
  return empty_strided(shape, elementwise_strides(shape, operands), dtype, meta);
}

bool any_meta_operand(std::initializer_list<Operand> ops) {
  for (const Operand& o : ops)
    if (o.is_tensor() && o.tensor->is_meta()) return true;
  return false;
}

void prepare_dest(std::string_view op, const Tensor& dst, bool inplace, const Shape& shape,
                  DType result, std::initializer_list<Operand> inputs) {
  // PyTorch's order (TensorIterator): memory overlap first, then types and shape.
  // Overlap is geometry: O(ndim) per operand, never per element. Meta tensors have
  // no storage, so only the internal overlap (a stride-0 dim) applies to them.
  assert_no_internal_overlap(op, dst);
  for (const Operand& o : inputs)
    if (o.is_tensor() && !o.tensor->is_same(dst)) assert_no_partial_overlap(op, dst, *o.tensor);
  check_can_cast(op, result, dst.dtype());
  if (inplace) {
    SF_CHECK(dst.sizes() == shape, "{}: output with shape {} doesn't match the broadcast shape {}",
             op, shape_to_string(dst.sizes()), shape_to_string(shape));
  } else {
    resize_out(op, dst, shape);
  }
}

void resize_out(std::string_view op, const Tensor& out, const Shape& shape) {
  if (out.sizes() == shape) return;
  SF_CHECK(out.numel() == 0, "{}: out= has shape {}, expected the result shape {}", op,
           shape_to_string(out.sizes()), shape_to_string(shape));
  Tensor handle = out;  // set_ changes the shared TensorImpl: every handle sees it
  if (out.is_meta()) {
    handle.set_(nullptr, shape, contiguous_strides(shape), 0);
  } else {
    Tensor fresh = Tensor::empty(shape, out.dtype());
    handle.set_(fresh.storage(), shape, fresh.strides(), 0);
  }
}

}  // namespace symmflow::kernels::pointwise_detail
