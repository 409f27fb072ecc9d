#include "symmflow/kernels/indexing.h"

#include <cstring>
#include <numeric>

#include "symmflow/kernels/copy.h"
#include "symmflow/kernels/views.h"

namespace symmflow::kernels {
namespace {

int64_t prod(const Shape& s, size_t begin, size_t end) {
  return std::accumulate(s.begin() + begin, s.begin() + end, int64_t(1), std::multiplies<>());
}

}  // namespace

std::vector<int64_t> index_values(const char* op, const Tensor& index, bool allow_i32) {
  SF_CHECK(index.dtype() == DType::i64 || (allow_i32 && index.dtype() == DType::i32),
           "{}: expected an index of dtype i64{}, got {}", op, allow_i32 ? " or i32" : "",
           index.type_string());
  const Tensor c = contiguous(index);
  std::vector<int64_t> v(size_t(c.numel()));
  if (c.dtype() == DType::i64) std::copy_n(c.data<int64_t>(), v.size(), v.begin());
  else std::copy_n(c.data<int32_t>(), v.size(), v.begin());
  return v;
}

void take_rows(const char* op, const char* what, const int64_t* rows, int64_t n, const char* src,
               int64_t outer, int64_t n_src, int64_t row_bytes, char* out) {
  for (int64_t i = 0; i < n; ++i)
    SF_CHECK(rows[i] >= 0 && rows[i] < n_src, "{}: {} (index {} of a dim of size {})", op, what, rows[i], n_src);
  for (int64_t o = 0; o < outer; ++o) {
    const char* s = src + o * n_src * row_bytes;
    for (int64_t i = 0; i < n; ++i, out += row_bytes) std::memcpy(out, s + rows[i] * row_bytes, size_t(row_bytes));
  }
}

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index) {
  SF_CHECK(index.dim() <= 1, "index_select: Index is supposed to be a vector, got {}", index.type_string());
  SF_CHECK(index.dtype() == DType::i64 || index.dtype() == DType::i32,
           "index_select: expected an index of dtype i64 or i32, got {}", index.type_string());
  const int64_t d = wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  Shape shape = self.sizes();
  if (self.dim() > 0) shape[size_t(d)] = index.numel();
  if (any_meta({&self, &index})) return Tensor::meta(shape, self.dtype());
  Tensor out = Tensor::empty(shape, self.dtype());
  const std::vector<int64_t> rows = index_values("index_select", index, true);
  const Shape& s = self.sizes();
  const size_t du = size_t(d);
  const bool scalar = self.dim() == 0;
  const Tensor src = contiguous(self);
  take_rows("index_select", "INDICES element is out of DATA bounds", rows.data(), int64_t(rows.size()),
            static_cast<const char*>(src.data_ptr()), scalar ? 1 : prod(s, 0, du), scalar ? 1 : s[du],
            (scalar ? 1 : prod(s, du + 1, s.size())) * int64_t(self.itemsize()), static_cast<char*>(out.data_ptr()));
  return out;
}

Tensor index(const Tensor& self, const std::vector<std::optional<Tensor>>& indices) {
  SF_CHECK(int64_t(indices.size()) <= self.dim(), "index: too many indices for tensor of dimension {} (got {})",
           self.dim(), indices.size());
  std::vector<size_t> at;  // the dims with an index tensor
  Shape bshape;
  bool meta = self.is_meta();
  for (size_t i = 0; i < indices.size(); ++i) {
    if (!indices[i]) continue;
    const Tensor& t = *indices[i];
    SF_CHECK(t.dtype() != DType::boolean,
             "index: boolean mask indices are not supported (the result's size depends on the data), got {}",
             t.type_string());
    SF_CHECK(t.dtype() == DType::i64, "index: tensors used as indices must be long, byte or bool tensors, got {}",
             t.type_string());
    bshape = at.empty() ? t.sizes() : broadcast_shapes(bshape, t.sizes());
    at.push_back(i);
    meta = meta || t.is_meta();
  }
  if (at.empty()) return clone(self);
  // Indexed dims not side by side: move them first (in order), where PyTorch puts
  // the broadcast dims in that case; then they are adjacent at 0.
  const bool adjacent = at.back() - at.front() + 1 == at.size();
  Tensor x = self;
  std::vector<size_t> pos = at;
  if (!adjacent) {
    Shape perm(at.begin(), at.end());
    for (int64_t d = 0; d < self.dim(); ++d)
      if (std::find(at.begin(), at.end(), size_t(d)) == at.end()) perm.push_back(d);
    x = permute(self, perm);
    for (size_t k = 0; k < pos.size(); ++k) pos[k] = k;
  }
  const Shape& s = x.sizes();
  const size_t first = pos.front(), last = pos.back() + 1;
  Shape shape(s.begin(), s.begin() + first);
  shape.insert(shape.end(), bshape.begin(), bshape.end());
  shape.insert(shape.end(), s.begin() + last, s.end());
  if (meta) return Tensor::meta(shape, self.dtype());
  // One linear row per broadcast position, over the merged indexed dims.
  const int64_t n = numel_of(bshape);
  std::vector<int64_t> rows(size_t(n), 0);
  for (size_t k = 0; k < at.size(); ++k) {
    const Tensor& t = *indices[at[k]];
    const int64_t size = s[pos[k]], inner = prod(s, pos[k] + 1, last);
    const std::vector<int64_t> v = index_values("index", expand(t, bshape), false);
    for (int64_t i = 0; i < n; ++i) {
      int64_t r = v[size_t(i)];
      SF_CHECK(r >= -size && r < size, "index: index {} is out of bounds for dimension {} with size {}", r, at[k],
               size);
      rows[size_t(i)] += (r < 0 ? r + size : r) * inner;
    }
  }
  Tensor out = Tensor::empty(shape, self.dtype());
  const Tensor src = contiguous(x);
  take_rows("index", "index out of range", rows.data(), n, static_cast<const char*>(src.data_ptr()),
            prod(s, 0, first), prod(s, first, last), prod(s, last, s.size()) * int64_t(self.itemsize()),
            static_cast<char*>(out.data_ptr()));
  return out;
}

Tensor gather(const Tensor& self, int64_t dim, const Tensor& index) {
  SF_CHECK(index.dtype() == DType::i64, "gather: Expected dtype int64 for index, got {}", index.type_string());
  const int64_t nd = std::max<int64_t>(self.dim(), 1), d = wrap_dim(dim, nd);
  SF_CHECK(std::max<int64_t>(index.dim(), 1) == nd,
           "gather: Index tensor must have the same number of dimensions as input tensor, got {} and {}",
           index.type_string(), self.type_string());
  for (int64_t k = 0; k < index.dim() && self.dim() > 0; ++k)
    SF_CHECK(k == d || index.size(k) <= self.size(k),
             "gather: Size does not match at dimension {} expected index {} to be smaller than self {} apart from "
             "dimension {}", k, shape_to_string(index.sizes()), shape_to_string(self.sizes()), d);
  if (any_meta({&self, &index})) return Tensor::meta(index.sizes(), self.dtype());
  Tensor out = Tensor::empty(index.sizes(), self.dtype());
  const std::vector<int64_t> v = index_values("gather", index, false);
  const int64_t size = self.dim() == 0 ? 1 : self.size(d), item = int64_t(self.itemsize());
  const char* src = static_cast<const char*>(self.data_ptr());
  char* o = static_cast<char*>(out.data_ptr());
  // Walk index's positions in row-major order, keeping self's offset of the
  // position with dim `d` at 0.
  Shape pos(size_t(index.dim()), 0);
  int64_t base = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    const int64_t r = v[i];
    SF_CHECK(r >= 0 && r < size, "gather: index {} is out of bounds for dimension {} with size {}", r, d, size);
    const int64_t off = base + (self.dim() == 0 ? 0 : r * self.stride(d));
    std::memcpy(o + int64_t(i) * item, src + off * item, size_t(item));
    for (int64_t k = index.dim() - 1; k >= 0; --k) {
      const int64_t st = k == d ? 0 : self.stride(k);
      if (++pos[size_t(k)] < index.size(k)) {
        base += st;
        break;
      }
      base -= st * (index.size(k) - 1);
      pos[size_t(k)] = 0;
    }
  }
  return out;
}

}  // namespace symmflow::kernels
