// copy_: writes src into dst elementwise (src broadcast to dst's shape, dtype
// converted). The dense same-dtype case is one memcpy. Both may be views.
#pragma once
#include "symmflow/core/scalar.h"
#include "symmflow/core/tensor.h"

namespace symmflow::kernels {

// Returns dst (the same handle). src must broadcast to exactly dst's shape, else
// "copy_: output with shape [3] doesn't match the broadcast shape [2, 3]" (also on
// meta tensors). Memory is not checked here: the kernels use it to copy into
// layouts that mirror the source (clone_layout of an expanded view, staging a
// strided input); a partial overlap of src and dst gives undefined values.
const Tensor& copy_(const Tensor& dst, const Tensor& src);
// aten::copy_: copy_() with PyTorch's memory checks first. The same tensor, or a view
// with the same geometry, is a no-op; otherwise dst must not repeat an element
// (stride 0 with size > 1, e.g. an expand: checked on meta tensors too) and must
// not partially overlap src (core/overlap.h; checked when it runs).
const Tensor& checked_copy_(const Tensor& dst, const Tensor& src);
// Sets every element of dst (through its view) to v. v must fit dst's dtype
// (PyTorch's checked conversion: fill_(i32, nan), fill_(f16, 1e6) are errors, on
// meta tensors too). An expanded dst is fine, as in PyTorch.
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
// The same layout on a new storage just large enough, not filled (a meta
// tensor for a meta t).
Tensor empty_layout(const Tensor& t);
// A new tensor of dtype `to` with t's values (converted, contiguous).
Tensor to_dtype(const Tensor& t, DType to);
// True when any input is a meta tensor: kernels then compute types only.
bool any_meta(std::initializer_list<const Tensor*> ts);

}  // namespace symmflow::kernels
