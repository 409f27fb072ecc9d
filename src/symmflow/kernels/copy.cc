#include "symmflow/kernels/copy.h"

#include <cstring>

#include "symmflow/kernels/loops.h"

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

}  // namespace

const Tensor& copy_(const Tensor& dst, const Tensor& src) {
  if (any_meta({&dst, &src})) {
    broadcast_shapes(dst.sizes(), src.sizes());  // still reject bad shapes
    return dst;
  }
  const auto& shape = dst.sizes();
  if (dst.dtype() == src.dtype() && dst.sizes() == src.sizes() && dst.is_contiguous() &&
      src.is_contiguous()) {
    if (dst.data_ptr() != src.data_ptr()) std::memmove(dst.data_ptr(), src.data_ptr(), dst.nbytes());
    return dst;
  }
  std::array<char*, 2> base{static_cast<char*>(dst.data_ptr()), static_cast<char*>(src.data_ptr())};
  std::array<std::vector<int64_t>, 2> st{byte_strides(dst), broadcast_byte_strides(src, shape)};
  DType dt = dst.dtype(), stype = src.dtype();
  SF_DISPATCH(dt, {
    using DT = T;
    SF_DISPATCH(stype, {
      using ST = T;
      for_each_run<2>(shape, base, st, convert_run<DT, ST>);
    });
  });
  return dst;
}

const Tensor& fill_(const Tensor& dst, const Scalar& v) {
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
