#include "symmflow/kernels/shape_ops.h"

#include "symmflow/core/checked.h"
#include "symmflow/kernels/copy.h"
#include "symmflow/kernels/factories.h"
#include "symmflow/kernels/indexing.h"
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
    out_sizes[d] = checked_add(out_sizes[d], x.sizes()[d], [&] { return fmt::format("cat: the size of dimension {}", d); });
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

namespace {

// self with the elements along dim d in the order order(i), i < size: flip and
// roll are index_select with a computed permutation.
template <typename F>
Tensor permute_along(const Tensor& x, int64_t d, F order) {
  const int64_t n = x.size(d);
  Tensor idx = Tensor::empty({n}, DType::i64);
  for (int64_t i = 0; i < n; ++i) idx.data<int64_t>()[i] = order(i, n);
  return index_select(x, d, idx);
}

}  // namespace

Tensor repeat(const Tensor& self, const Shape& repeats) {
  SF_CHECK(int64_t(repeats.size()) >= self.dim(),
           "repeat: Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor "
           "({} < {})", repeats.size(), self.dim());
  for (int64_t r : repeats) SF_CHECK(r >= 0, "repeat: Trying to create tensor with negative dimension {}", r);
  // [s0, s1] tiled [r0, r1]: view as [1, s0, 1, s1], expand to [r0, s0, r1, s1], copy,
  // view as [r0*s0, r1*s1].
  const size_t pad = repeats.size() - size_t(self.dim());
  Shape unit, tiled, out;
  for (size_t d = 0; d < repeats.size(); ++d) {
    const int64_t s = d < pad ? 1 : self.size(int64_t(d - pad));
    unit.insert(unit.end(), {1, s});
    tiled.insert(tiled.end(), {repeats[d], s});
    out.push_back(checked_mul(repeats[d], s, [&] { return fmt::format("repeat: dimension {} of the result", d); }));
  }
  if (self.is_meta()) return Tensor::meta(out, self.dtype());
  return view(clone(expand(reshape(self, unit), tiled)), out);
}

Tensor flip(const Tensor& self, const Shape& dims) {
  std::vector<bool> seen(size_t(std::max<int64_t>(self.dim(), 1)), false);
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, std::max<int64_t>(self.dim(), 1));
    SF_CHECK(!seen[size_t(w)], "flip: dim {} appears multiple times in the list of dims", w);
    seen[size_t(w)] = true;
  }
  if (self.is_meta()) return Tensor::meta(self.sizes(), self.dtype());
  Tensor x = self.dim() == 0 ? clone(self) : self;
  for (int64_t d : dims)
    if (self.dim() > 0) x = permute_along(x, wrap_dim(d, self.dim()), [](int64_t i, int64_t n) { return n - 1 - i; });
  return x.is_same(self) ? clone(self) : x;
}

Tensor roll(const Tensor& self, const Shape& shifts, const Shape& dims) {
  SF_CHECK(!shifts.empty(), "roll: `shifts` required");
  if (dims.empty()) {
    SF_CHECK(shifts.size() == 1, "roll: shifts and dimensions must align. shifts: {}, dims: 0", shifts.size());
    if (self.is_meta()) return Tensor::meta(self.sizes(), self.dtype());
    return view(roll(flatten(self, 0, -1), shifts, {0}), self.sizes());
  }
  SF_CHECK(shifts.size() == dims.size(), "roll: shifts and dimensions must align. shifts: {}, dims: {}",
           shifts.size(), dims.size());
  for (int64_t d : dims) wrap_dim(d, std::max<int64_t>(self.dim(), 1));
  if (self.is_meta()) return Tensor::meta(self.sizes(), self.dtype());
  Tensor x = self;
  for (size_t k = 0; k < dims.size() && self.numel() > 0; ++k) {
    const int64_t s = shifts[k];
    // s % n first: i - s could overflow for a shift near the int64 limits.
    x = permute_along(x, wrap_dim(dims[k], std::max<int64_t>(self.dim(), 1)),
                      [s](int64_t i, int64_t n) { return ((i - s % n) % n + n) % n; });
  }
  return x.is_same(self) ? clone(self) : x;
}

Tensor constant_pad_nd(const Tensor& self, const Shape& pad, const Scalar& value) {
  SF_CHECK(pad.size() % 2 == 0, "constant_pad_nd: Length of pad must be even but instead it equals {}", pad.size());
  SF_CHECK(int64_t(pad.size()) <= 2 * self.dim(),
           "constant_pad_nd: Length of pad should be no more than twice the number of dimensions of the input. "
           "Pad length is {} while the input has {} dimensions.", pad.size(), self.dim());
  Shape shape = self.sizes();
  for (size_t k = 0; k < pad.size() / 2; ++k) {
    const size_t d = shape.size() - 1 - k;
    auto what = [&] { return fmt::format("constant_pad_nd: the padded size of dimension {}", d); };
    const int64_t n = checked_add(checked_add(shape[d], pad[2 * k], what), pad[2 * k + 1], what);
    SF_CHECK(n >= 0, "constant_pad_nd: The input size {}, plus negative padding {} and {} resulted in a negative "
             "output size, which is invalid. Check dimension {} of your input.", shape[d], pad[2 * k],
             pad[2 * k + 1], d);
    shape[d] = n;
  }
  Tensor out = full(shape, value, self.dtype(), self.is_meta());  // checks that value fits
  if (out.is_meta()) return out;
  // The kept block: in `out` from max(before, 0), in self from max(-before, 0).
  Tensor dst = out, src = self;
  for (size_t k = 0; k < pad.size() / 2; ++k) {
    const int64_t d = int64_t(shape.size() - 1 - k), before = pad[2 * k];
    const int64_t len = std::min(self.size(d) - std::max<int64_t>(-before, 0),
                                 shape[size_t(d)] - std::max<int64_t>(before, 0));
    if (len <= 0) return out;
    dst = narrow(dst, d, std::max<int64_t>(before, 0), len);
    src = narrow(src, d, std::max<int64_t>(-before, 0), len);
  }
  copy_(dst, src);
  return out;
}

}  // namespace symmflow::kernels
