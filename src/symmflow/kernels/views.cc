#include "symmflow/kernels/views.h"

#include <algorithm>
#include <limits>

#include "symmflow/core/checked.h"
#include "symmflow/kernels/copy.h"

namespace symmflow::kernels {

Shape infer_size(const Shape& shape, int64_t numel) {
  int64_t known = 1;
  std::optional<size_t> infer;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      SF_CHECK(!infer, "view: only one dimension can be inferred, got shape {}",
               shape_to_string(shape));
      infer = i;
    } else {
      SF_CHECK(shape[i] >= 0, "view: invalid size {} at dimension {} of shape {}", shape[i], i,
               shape_to_string(shape));
      known = checked_mul(known, shape[i], [&] { return "view: the element count of shape " + shape_to_string(shape); });
    }
  }
  Shape out = shape;
  if (infer) {
    // With a zero in the known sizes the -1 could be anything.
    SF_CHECK(known != 0 && numel % known == 0,
             "view: shape {} is invalid for input of size {}", shape_to_string(shape), numel);
    out[*infer] = numel / known;
  } else {
    SF_CHECK(known == numel, "view: shape {} is invalid for input of size {}",
             shape_to_string(shape), numel);
  }
  return out;
}

std::optional<Shape> view_strides(const Shape& sizes, const Shape& strides,
                                  const Shape& new_sizes) {
  if (sizes.empty()) return Shape(new_sizes.size(), 1);
  const int64_t numel = numel_of(sizes);
  if (numel == 0 && sizes == new_sizes) return strides;
  Shape out(new_sizes.size());
  if (numel == 0) return contiguous_strides(new_sizes);
  // Walk t's dims from the back in chunks that are contiguous within themselves;
  // each chunk must be covered by a run of new dims with the same element count.
  int64_t view_d = int64_t(new_sizes.size()) - 1;
  int64_t chunk_base_stride = strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = int64_t(sizes.size()) - 1; d >= 0; --d) {
    tensor_numel *= sizes[d];
    if (d == 0 || (sizes[d - 1] != 1 && strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
        out[view_d] = view_numel * chunk_base_stride;
        view_numel *= new_sizes[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base_stride = strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

Tensor view(const Tensor& t, const Shape& shape) {
  Shape sizes = infer_size(shape, t.numel());
  auto strides = view_strides(t.sizes(), t.strides(), sizes);
  SF_CHECK(strides.has_value(),
           "view: shape {} is not compatible with input {} of strides {} (a merged or split "
           "dimension spans two non-contiguous blocks); use reshape instead",
           shape_to_string(sizes), t.type_string(), shape_to_string(t.strides()));
  return t.as_strided(std::move(sizes), std::move(*strides), t.storage_offset());
}

Tensor reshape(const Tensor& t, const Shape& shape) {
  Shape sizes = infer_size(shape, t.numel());
  if (auto strides = view_strides(t.sizes(), t.strides(), sizes))
    return t.as_strided(std::move(sizes), std::move(*strides), t.storage_offset());
  Tensor c = clone(t);  // contiguous, so the view below always succeeds
  return c.as_strided(sizes, contiguous_strides(sizes), 0);
}

Tensor slice(const Tensor& t, int64_t dim, std::optional<int64_t> start,
             std::optional<int64_t> end, int64_t step) {
  SF_CHECK(t.dim() > 0, "slice: cannot slice a 0-dim tensor {}", t.type_string());
  SF_CHECK(step > 0, "slice: step must be positive, got {}", step);
  const int64_t d = wrap_dim(dim, t.dim());
  const int64_t size = t.sizes()[d];
  int64_t s = start.value_or(0);
  int64_t e = end.value_or(std::numeric_limits<int64_t>::max());
  if (s < 0) s += size;
  if (e < 0) e += size;
  s = std::clamp<int64_t>(s, 0, size);
  e = std::clamp<int64_t>(e, s, size);
  Shape sizes = t.sizes(), strides = t.strides();
  sizes[d] = e == s ? 0 : (e - s - 1) / step + 1;  // ceil((e - s) / step); e - s + step could overflow
  const int64_t offset = t.storage_offset() + (sizes[d] > 0 ? s * strides[d] : 0);
  strides[d] = sizes[d] > 1 ? checked_mul(strides[d], step, "slice: the stride times the step") : strides[d];
  return t.as_strided(std::move(sizes), std::move(strides), offset);
}

Tensor select(const Tensor& t, int64_t dim, int64_t index) {
  SF_CHECK(t.dim() > 0, "select: cannot select from a 0-dim tensor {}", t.type_string());
  const int64_t d = wrap_dim(dim, t.dim());
  const int64_t size = t.sizes()[d];
  SF_CHECK(index >= -size && index < size,
           "select: index {} out of range for tensor {} at dimension {} (expected in [{}, {}])",
           index, t.type_string(), d, -size, size - 1);
  if (index < 0) index += size;
  Shape sizes = t.sizes(), strides = t.strides();
  const int64_t offset = t.storage_offset() + index * strides[d];
  sizes.erase(sizes.begin() + d);
  strides.erase(strides.begin() + d);
  return t.as_strided(std::move(sizes), std::move(strides), offset);
}

Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t length) {
  SF_CHECK(t.dim() > 0, "narrow: cannot narrow a 0-dim tensor {}", t.type_string());
  const int64_t d = wrap_dim(dim, t.dim());
  const int64_t size = t.sizes()[d];
  SF_CHECK(start >= -size && start <= size,
           "narrow: start {} out of range for dimension {} of size {} (expected in [{}, {}])",
           start, d, size, -size, size);
  if (start < 0) start += size;
  SF_CHECK(length >= 0 && length <= size - start,
           "narrow: start ({}) + length ({}) exceeds dimension {} of size {}", start, length, d,
           size);
  return slice(t, d, start, start + length, 1);
}

std::vector<Tensor> split(const Tensor& t, int64_t split_size, int64_t dim) {
  SF_CHECK(t.dim() > 0, "split: expected at least a 1-dimensional tensor, got {}", t.type_string());
  SF_CHECK(split_size >= 0, "split: expected a non-negative split_size, got split_size={}", split_size);
  const int64_t d = wrap_dim(dim, t.dim());
  const int64_t size = t.sizes()[d];
  SF_CHECK(split_size != 0 || size == 0,
           "split: split_size can only be 0 if dimension size is 0, but got dimension size of {}", size);
  // An empty dim still gives one (empty) view.
  const int64_t n = split_size == 0 || size == 0 ? 1 : (size - 1) / split_size + 1;
  std::vector<Tensor> out;
  for (int64_t i = 0; i < n; ++i)
    out.push_back(narrow(t, d, i * split_size, std::min(split_size, size - i * split_size)));
  return out;
}

std::vector<Tensor> split_with_sizes(const Tensor& t, const Shape& split_sizes, int64_t dim) {
  SF_CHECK(t.dim() > 0, "split_with_sizes: expected at least a 1-dimensional tensor, got {}",
           t.type_string());
  const int64_t d = wrap_dim(dim, t.dim());
  const int64_t size = t.sizes()[d];
  int64_t total = 0;
  for (int64_t s : split_sizes) {
    SF_CHECK(s >= 0, "split_with_sizes: expected split_sizes to have only non-negative entries, got {}",
             shape_to_string(split_sizes));
    total = checked_add(total, s, "split_with_sizes: the sum of split_sizes");
  }
  SF_CHECK(total == size,
           "split_with_sizes: expected split_sizes to sum exactly to {} (input tensor's size at "
           "dimension {}), but got split_sizes={}",
           size, d, shape_to_string(split_sizes));
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t s : split_sizes) {
    out.push_back(narrow(t, d, start, s));
    start += s;
  }
  return out;
}

std::vector<Tensor> chunk(const Tensor& t, int64_t chunks, int64_t dim) {
  SF_CHECK(t.dim() > 0, "chunk: expected at least a 1-dimensional tensor, got {}", t.type_string());
  SF_CHECK(chunks > 0, "chunk: expected `chunks` to be greater than 0, got: {}", chunks);
  const int64_t size = t.sizes()[wrap_dim(dim, t.dim())];
  // An empty dim: `chunks` empty views (split would give one).
  if (size == 0) return split_with_sizes(t, Shape(size_t(chunks), 0), dim);
  return split(t, (size - 1) / chunks + 1, dim);
}

std::vector<Tensor> unbind(const Tensor& t, int64_t dim) {
  SF_CHECK(t.dim() > 0, "unbind: Dimension specified as {} but tensor has no dimensions", dim);
  const int64_t d = wrap_dim(dim, t.dim());
  std::vector<Tensor> out;
  for (int64_t i = 0; i < t.size(d); ++i) out.push_back(select(t, d, i));
  return out;
}

Tensor transpose(const Tensor& t, int64_t dim0, int64_t dim1) {
  const int64_t a = wrap_dim(dim0, t.dim()), b = wrap_dim(dim1, t.dim());
  Shape sizes = t.sizes(), strides = t.strides();
  if (t.dim() > 0) {
    std::swap(sizes[a], sizes[b]);
    std::swap(strides[a], strides[b]);
  }
  return t.as_strided(std::move(sizes), std::move(strides), t.storage_offset());
}

Tensor t(const Tensor& self) {
  SF_CHECK(self.dim() <= 2, "t: expected a tensor with <= 2 dimensions, got {}",
           self.type_string());
  return self.dim() < 2 ? alias(self) : transpose(self, 0, 1);
}

Tensor permute(const Tensor& t, const Shape& dims) {
  SF_CHECK(int64_t(dims.size()) == t.dim(),
           "permute: expected {} dims for input {}, got {}", t.dim(), t.type_string(),
           shape_to_string(dims));
  Shape sizes(dims.size()), strides(dims.size());
  std::vector<bool> seen(dims.size(), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = wrap_dim(dims[i], t.dim());
    SF_CHECK(!seen[d], "permute: dim {} repeats in {}", d, shape_to_string(dims));
    seen[d] = true;
    sizes[i] = t.sizes()[d];
    strides[i] = t.strides()[d];
  }
  return t.as_strided(std::move(sizes), std::move(strides), t.storage_offset());
}

Tensor expand(const Tensor& t, const Shape& sizes) {
  const int64_t out_dims = int64_t(sizes.size()), in_dims = t.dim();
  SF_CHECK(out_dims >= in_dims,
           "expand: the number of sizes ({}) must be at least the number of dimensions of "
           "{}", out_dims, t.type_string());
  Shape out_sizes(out_dims), out_strides(out_dims);
  for (int64_t i = out_dims - 1; i >= 0; --i) {
    const int64_t d = i - (out_dims - in_dims);  // t's dim, or < 0 for a new leading dim
    int64_t size = sizes[i];
    int64_t stride = d >= 0 ? t.strides()[d]
                            : (i + 1 < out_dims ? checked_mul(out_sizes[i + 1], out_strides[i + 1], [&] {
                                return "expand: the stride of a new leading dimension in " + shape_to_string(sizes);
                              })
                                                : 1);
    const int64_t have = d >= 0 ? t.sizes()[d] : 1;
    if (d < 0) {
      SF_CHECK(size >= 0, "expand: size {} is not allowed for the new leading dimension {} ({})",
               size, i, shape_to_string(sizes));
    } else if (size == -1) {
      size = have;
    }
    if (have != size) {
      SF_CHECK(have == 1,
               "expand: the expanded size ({}) must match the existing size ({}) at "
               "non-singleton dimension {}; target {}, tensor {}",
               size, have, i, shape_to_string(sizes), t.type_string());
      SF_CHECK(size >= 0, "expand: invalid size {} in {}", size, shape_to_string(sizes));
      stride = 0;
    }
    out_sizes[i] = size;
    out_strides[i] = stride;
  }
  return t.as_strided(std::move(out_sizes), std::move(out_strides), t.storage_offset());
}

Tensor unsqueeze(const Tensor& t, int64_t dim) {
  const int64_t d = wrap_dim(dim, t.dim() + 1);
  Shape sizes = t.sizes(), strides = t.strides();
  const int64_t stride = d >= t.dim() ? 1 : checked_mul(sizes[d], strides[d], "unsqueeze: the new stride");
  sizes.insert(sizes.begin() + d, 1);
  strides.insert(strides.begin() + d, stride);
  return t.as_strided(std::move(sizes), std::move(strides), t.storage_offset());
}

Tensor squeeze(const Tensor& t) {
  Shape sizes, strides;
  for (int64_t i = 0; i < t.dim(); ++i) {
    if (t.sizes()[i] == 1) continue;
    sizes.push_back(t.sizes()[i]);
    strides.push_back(t.strides()[i]);
  }
  return t.as_strided(std::move(sizes), std::move(strides), t.storage_offset());
}

Tensor squeeze(const Tensor& t, int64_t dim) {
  const int64_t d = wrap_dim(dim, t.dim());
  if (t.dim() == 0 || t.sizes()[d] != 1) return alias(t);
  Shape sizes = t.sizes(), strides = t.strides();
  sizes.erase(sizes.begin() + d);
  strides.erase(strides.begin() + d);
  return t.as_strided(std::move(sizes), std::move(strides), t.storage_offset());
}

Tensor flatten(const Tensor& t, int64_t start_dim, int64_t end_dim) {
  if (t.dim() == 0) return reshape(t, {1});
  const int64_t s = wrap_dim(start_dim, t.dim()), e = wrap_dim(end_dim, t.dim());
  SF_CHECK(s <= e, "flatten: start_dim {} must not come after end_dim {} for {}", s, e,
           t.type_string());
  if (s == e) return alias(t);
  Shape shape(t.sizes().begin(), t.sizes().begin() + s);
  int64_t merged = 1;
  for (int64_t i = s; i <= e; ++i) merged *= t.sizes()[i];
  shape.push_back(merged);
  shape.insert(shape.end(), t.sizes().begin() + e + 1, t.sizes().end());
  return reshape(t, shape);
}

Tensor alias(const Tensor& t) { return t.as_strided(t.sizes(), t.strides(), t.storage_offset()); }

Tensor as_strided(const Tensor& t, const Shape& sizes, const Shape& strides,
                  std::optional<int64_t> storage_offset) {
  SF_CHECK(sizes.size() == strides.size(), "as_strided: {} sizes {} but {} strides {}",
           sizes.size(), shape_to_string(sizes), strides.size(), shape_to_string(strides));
  for (int64_t s : strides)
    SF_CHECK(s >= 0, "as_strided: Negative strides are not supported at the moment, got strides: {}",
             shape_to_string(strides));
  return t.as_strided(sizes, strides, storage_offset.value_or(t.storage_offset()));
}

}  // namespace symmflow::kernels
