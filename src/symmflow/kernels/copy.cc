#include "symmflow/kernels/copy.h"

#include <algorithm>
#include <cstring>

#include "symmflow/core/overlap.h"
#include "symmflow/core/strided.h"
#include "symmflow/kernels/loops.h"
#include "symmflow/kernels/type_promotion.h"

namespace symmflow::kernels {

bool any_meta(std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts)
    if (t->defined() && t->is_meta()) return true;
  return false;
}

namespace {

template <typename D, typename S>
void convert_run(char** p, const int64_t* s, int64_t n) {
  char* d = p[0];
  const char* q = p[1];
  for (int64_t i = 0; i < n; ++i, d += s[0], q += s[1]) {
    S v;
    std::memcpy(&v, q, sizeof(S));
    D out;
    if constexpr (std::is_same_v<D, bool>) out = float(v) != 0.0f || double(v) != 0.0;
    else if constexpr (std::is_same_v<D, BFloat16> || std::is_same_v<D, Half>) out = D(float(v));
    else if constexpr (std::is_same_v<S, BFloat16> || std::is_same_v<S, Half>) out = D(float(v));
    else out = D(v);
    std::memcpy(d, &out, sizeof(D));
  }
}

// src must broadcast to dst's shape exactly (PyTorch: dst is the iterator's output,
// which is never resized), with PyTorch's two messages.
void check_copy_shapes(const Tensor& dst, const Tensor& src) {
  const Shape& d = dst.sizes();
  const Shape& s = src.sizes();
  const size_t n = std::max(d.size(), s.size());
  for (size_t i = 0; i < n; ++i) {
    const int64_t a = i < n - d.size() ? 1 : d[i - (n - d.size())];
    const int64_t b = i < n - s.size() ? 1 : s[i - (n - s.size())];
    SF_CHECK(a == b || a == 1 || b == 1,
             "copy_: The size of tensor a ({}) must match the size of tensor b ({}) at "
             "non-singleton dimension {} (copying {} into {})",
             a, b, i, src.type_string(), dst.type_string());
  }
  const Shape b = broadcast_shapes(d, s);
  SF_CHECK(b == d, "copy_: output with shape {} doesn't match the broadcast shape {}",
           shape_to_string(d), shape_to_string(b));
}

}  // namespace

const Tensor& copy_(const Tensor& dst, const Tensor& src) {
  check_copy_shapes(dst, src);
  if (any_meta({&dst, &src})) return dst;
  const auto& shape = dst.sizes();
  std::array<char*, 2> base{static_cast<char*>(dst.data_ptr()), static_cast<char*>(src.data_ptr())};
  std::array<std::vector<int64_t>, 2> st{byte_strides(dst), broadcast_byte_strides(src, shape)};
  // Separate memory: the runs may go in any order, so a transposed operand is
  // copied tile by tile (loops.h) instead of an element per cache line.
  const bool any_order = !dst.shares_storage(src);
  if (dst.dtype() == src.dtype() && dst.sizes() == src.sizes()) {
    if (dst.is_contiguous() && src.is_contiguous()) {
      if (dst.data_ptr() != src.data_ptr()) std::memmove(dst.data_ptr(), src.data_ptr(), dst.nbytes());
      return dst;
    }
    // Gathering a strided view into a dense tensor (clone, contiguous) or back:
    // core's pack/unpack copy whole runs (memmove: as above, a view may overlap).
    auto move_bytes = [](void* to, const void* from, size_t n) { std::memmove(to, from, n); };
    const bool transposed = any_order && inner_transposed(coalesce<2>(shape, st));
    if (dst.is_contiguous() && !transposed) {
      pack(src, dst.data_ptr(), move_bytes);
      return dst;
    }
    if (src.is_contiguous() && !transposed) {
      unpack(src.data_ptr(), dst, move_bytes);
      return dst;
    }
  }
  DType dt = dst.dtype(), stype = src.dtype();
  SF_DISPATCH(dt, {
    using DT = T;
    SF_DISPATCH(stype, {
      using ST = T;
      if (any_order) for_each_run_tiled<2>(shape, base, st, convert_run<DT, ST>);
      else for_each_run<2>(shape, base, st, convert_run<DT, ST>);
    });
  });
  return dst;
}

const Tensor& checked_copy_(const Tensor& dst, const Tensor& src) {
  if (dst.is_same(src)) return dst;
  const bool meta = any_meta({&dst, &src});
  // PyTorch returns before any check when both are views of the same data.
  if (!meta && dst.shares_storage(src) && dst.storage_offset() == src.storage_offset() &&
      dst.dtype() == src.dtype() && dst.sizes() == src.sizes() && dst.strides() == src.strides())
    return dst;
  assert_no_internal_overlap("copy_", dst);
  if (!meta) assert_no_partial_overlap("copy_", dst, src);
  return copy_(dst, src);
}

const Tensor& fill_(const Tensor& dst, const Scalar& v) {
  check_scalar_fits("fill_", v, dst.dtype());
  if (dst.is_meta()) return dst;
  std::array<char*, 1> base{static_cast<char*>(dst.data_ptr())};
  std::array<std::vector<int64_t>, 1> st{byte_strides(dst)};
  SF_DISPATCH(dst.dtype(), {
    const T value = v.to<T>();
    for_each_run<1>(dst.sizes(), base, st, [&](char** p, const int64_t* s, int64_t n) {
      char* d = p[0];
      for (int64_t i = 0; i < n; ++i, d += s[0]) std::memcpy(d, &value, sizeof(T));
    });
  });
  return dst;
}

const Tensor& zero_(const Tensor& dst) { return fill_(dst, Scalar(int64_t(0))); }

Tensor clone(const Tensor& t) {
  if (t.is_meta()) return Tensor::meta(t.sizes(), t.dtype());
  Tensor out = Tensor::empty(t.sizes(), t.dtype());
  copy_(out, t);
  return out;
}

Tensor clone_layout(const Tensor& t) {
  int64_t extent = t.numel() == 0 ? 0 : 1;
  for (int64_t d = 0; d < t.dim(); ++d) extent += (t.size(d) - 1) * t.stride(d);
  const int64_t elems = t.storage_offset() + extent;
  Tensor base = t.is_meta() ? Tensor::meta({elems}, t.dtype()) : Tensor::empty({elems}, t.dtype());
  Tensor out = base.as_strided(t.sizes(), t.strides(), t.storage_offset());
  if (!t.is_meta()) copy_(out, t);
  return out;
}

Tensor contiguous(const Tensor& t) { return t.is_contiguous() ? t : clone(t); }

Tensor to_dtype(const Tensor& t, DType to) {
  if (t.is_meta()) return Tensor::meta(t.sizes(), to);
  Tensor out = Tensor::empty(t.sizes(), to);
  copy_(out, t);
  return out;
}

}  // namespace symmflow::kernels
