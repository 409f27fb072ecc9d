// copy_: writes src into dst elementwise (src broadcast to dst's shape, dtype
// converted). The dense same-dtype case is one memcpy. Both may be views.
#pragma once
#include "symmflow/core/scalar.h"
#include "symmflow/core/tensor.h"

namespace symmflow::kernels {

// Returns dst (the same handle). If src and dst overlap partially the result is
// undefined, as in PyTorch; identical views are fine.
const Tensor& copy_(const Tensor& dst, const Tensor& src);
// Sets every element of dst (through its view) to v.
const Tensor& fill_(const Tensor& dst, const Scalar& v);
const Tensor& zero_(const Tensor& dst);
// A new contiguous tensor with t's values (t itself when already contiguous,
// for contiguous(); always a fresh tensor for clone()).
Tensor contiguous(const Tensor& t);
Tensor clone(const Tensor& t);
// A fresh tensor with t's values *and* t's layout: the same sizes, strides and
// storage offset, on a new storage just large enough. Functionalization keeps
// every version of a storage in the storage's layout this way, so a view's
// geometry means the same place in every version.
Tensor clone_layout(const Tensor& t);
// A new tensor of dtype `to` with t's values (converted, contiguous).
Tensor to_dtype(const Tensor& t, DType to);
// True when any input is a meta tensor: kernels then compute types only.
bool any_meta(std::initializer_list<const Tensor*> ts);

}  // namespace symmflow::kernels
