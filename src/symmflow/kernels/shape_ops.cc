#include "symmflow/kernels/shape_ops.h"

#include "symmflow/kernels/copy.h"
#include "symmflow/kernels/views.h"

namespace symmflow::kernels {

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) {
  SF_CHECK(!tensors.empty(), "cat: expected a non-empty list of tensors");
  DType dt = tensors[0].dtype();
  bool meta = false;
  const Tensor* ref = nullptr;  // the first tensor that is not skipped
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& x = tensors[i];
    SF_CHECK(x.defined(), "cat: tensor {} in the list is undefined", i);
    SF_CHECK(x.dim() > 0, "cat: zero-dimensional tensor {} (at position {}) cannot be concatenated",
             x.type_string(), i);
    dt = promote_types(dt, x.dtype());
    meta = meta || x.is_meta();
    if (!ref && !(x.dim() == 1 && x.size(0) == 0)) ref = &x;
  }
  if (!ref) return meta ? Tensor::meta({0}, dt) : Tensor::empty({0}, dt);
  const int64_t d = wrap_dim(dim, ref->dim());
  Shape out_sizes = ref->sizes();
  out_sizes[d] = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& x = tensors[i];
    if (x.dim() == 1 && x.size(0) == 0) continue;
    SF_CHECK(x.dim() == ref->dim(),
             "cat: tensors must have the same number of dimensions: expected {} like {}, got {} "
             "at position {}", ref->dim(), ref->type_string(), x.type_string(), i);
    for (int64_t k = 0; k < x.dim(); ++k)
      SF_CHECK(k == d || x.sizes()[k] == ref->sizes()[k],
               "cat: sizes must match except in dimension {}: expected size {} in dimension {} "
               "like {}, got {} at position {}", d, ref->sizes()[k], k, ref->type_string(),
               x.type_string(), i);
    out_sizes[d] += x.sizes()[d];
  }
  if (meta) return Tensor::meta(out_sizes, dt);
  Tensor out = Tensor::empty(out_sizes, dt);
  int64_t at = 0;
  for (const Tensor& x : tensors) {
    if (x.dim() == 1 && x.size(0) == 0) continue;
    copy_(narrow(out, d, at, x.sizes()[d]), x);
    at += x.sizes()[d];
  }
  return out;
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) {
  SF_CHECK(!tensors.empty(), "stack: expected a non-empty list of tensors");
  const int64_t d = wrap_dim(dim, tensors[0].dim() + 1);
  std::vector<Tensor> parts;
  parts.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    SF_CHECK(tensors[i].sizes() == tensors[0].sizes(),
             "stack: expected every tensor to have the same shape, got {} at position 0 and {} "
             "at position {}", tensors[0].type_string(), tensors[i].type_string(), i);
    parts.push_back(unsqueeze(tensors[i], d));
  }
  return cat(parts, d);
}

}  // namespace symmflow::kernels
