#include "symmflow/kernels/copy.h"

#include <algorithm>
#include <cstring>

#include "symmflow/core/overlap.h"
#include "symmflow/core/strided.h"
#include "symmflow/kernels/loops.h"
#include "symmflow/kernels/simd.h"
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

// A 4-byte element's 8 x 8 block transposed in registers (gcc's vector
// extension: AVX2 unpacks, shuffles and lane permutes inside simd::run), the
// standard three stages: pairs, quads, then 128-bit halves.
typedef int32_t I8 __attribute__((vector_size(32)));

// Pairs (lo/hi 2), quads (4) and 128-bit halves (8) of two vectors' elements;
// __builtin_shufflevector (gcc 12 and clang) takes constant indices only.
#define SF_LO2(a, b) __builtin_shufflevector(a, b, 0, 8, 1, 9, 4, 12, 5, 13)
#define SF_HI2(a, b) __builtin_shufflevector(a, b, 2, 10, 3, 11, 6, 14, 7, 15)
#define SF_LO4(a, b) __builtin_shufflevector(a, b, 0, 1, 8, 9, 4, 5, 12, 13)
#define SF_HI4(a, b) __builtin_shufflevector(a, b, 2, 3, 10, 11, 6, 7, 14, 15)
#define SF_LO8(a, b) __builtin_shufflevector(a, b, 0, 1, 2, 3, 8, 9, 10, 11)
#define SF_HI8(a, b) __builtin_shufflevector(a, b, 4, 5, 6, 7, 12, 13, 14, 15)

// By reference: a 32-byte vector passed by value changes the ABI without AVX (-Wpsabi).
inline void transpose_8x8(I8 (&r)[8]) {
  const I8 t0 = SF_LO2(r[0], r[1]), t1 = SF_HI2(r[0], r[1]), t2 = SF_LO2(r[2], r[3]), t3 = SF_HI2(r[2], r[3]);
  const I8 t4 = SF_LO2(r[4], r[5]), t5 = SF_HI2(r[4], r[5]), t6 = SF_LO2(r[6], r[7]), t7 = SF_HI2(r[6], r[7]);
  const I8 u0 = SF_LO4(t0, t2), u1 = SF_HI4(t0, t2), u2 = SF_LO4(t1, t3), u3 = SF_HI4(t1, t3);
  const I8 u4 = SF_LO4(t4, t6), u5 = SF_HI4(t4, t6), u6 = SF_LO4(t5, t7), u7 = SF_HI4(t5, t7);
  r[0] = SF_LO8(u0, u4), r[4] = SF_HI8(u0, u4);
  r[1] = SF_LO8(u1, u5), r[5] = SF_HI8(u1, u5);
  r[2] = SF_LO8(u2, u6), r[6] = SF_HI8(u2, u6);
  r[3] = SF_LO8(u3, u7), r[7] = SF_HI8(u3, u7);
}
#undef SF_LO2
#undef SF_HI2
#undef SF_LO4
#undef SF_HI4
#undef SF_LO8
#undef SF_HI8

// dst[r][c] = src[c][r] for 4-byte elements: dst row r at dst + r * dst_row, src
// row c at src + c * src_row (in elements), r < rows, c < cols. 16 x 16 blocks
// (four 8 x 8 ones in registers), so that each cache line read or written (16
// elements) is done with soon: rows of a power-of-two stride share an L1 set.
// Edges element by element. Measured (copy_ of x.t(), f32): 256 x 256 10 us
// (the element loop of 8 x 8 tiles: ~50), 1024 x 1024 330-530 us, against 88 for a
// plain copy: there every row is its own 4 KiB page and L1 set, and neither outer
// tiles (16 to 256) nor software prefetch changed it.
void transpose_4byte(int32_t* dst, int64_t dst_row, const int32_t* src, int64_t src_row, int64_t rows,
                     int64_t cols) {
  simd::run([&] {
    const int64_t rows16 = rows - rows % 16, cols16 = cols - cols % 16;
    for (int64_t r0 = 0; r0 < rows16; r0 += 16)
      for (int64_t c0 = 0; c0 < cols16; c0 += 16)
        for (int64_t blk = 0; blk < 4; ++blk) {
          const int64_t r1 = r0 + 8 * (blk >> 1), c1 = c0 + 8 * (blk & 1);
          I8 v[8];
#pragma GCC unroll 8
          for (int c = 0; c < 8; ++c) std::memcpy(&v[c], src + (c1 + c) * src_row + r1, sizeof(I8));
          transpose_8x8(v);
#pragma GCC unroll 8
          for (int r = 0; r < 8; ++r) std::memcpy(dst + (r1 + r) * dst_row + c1, &v[r], sizeof(I8));
        }
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = r < rows16 ? cols16 : 0; c < cols; ++c) dst[r * dst_row + c] = src[c * src_row + r];
  });
}

// copy_ of a 4-byte dtype whose coalesced loop is one 2-D transpose (x.t()
// into a row-major tensor, or a row-major tensor into x.t()'s layout: the
// binary ops' operand read across, pointwise_impl.h): true when done.
bool copy_transposed_4byte(const Tensor& dst, const Tensor& src, const StridedLoop<2>& loop) {
  if (dst.dtype() != src.dtype() || element_size(dst.dtype()) != 4 || loop.sizes.size() != 2) return false;
  const auto& d = loop.strides[0];
  const auto& s = loop.strides[1];
  // Dim 1 contiguous in dst and dim 0 in src, or the other way round (then the
  // dims swap roles).
  const int inner = d[1] == 4 && s[0] == 4 ? 1 : d[0] == 4 && s[1] == 4 ? 0 : -1;
  if (inner < 0) return false;
  const int outer = 1 - inner;
  if (d[outer] < 0 || s[inner] < 0 || d[outer] % 4 != 0 || s[inner] % 4 != 0) return false;
  transpose_4byte(static_cast<int32_t*>(dst.data_ptr()), d[outer] / 4, static_cast<const int32_t*>(src.data_ptr()),
                  s[inner] / 4, loop.sizes[size_t(outer)], loop.sizes[size_t(inner)]);
  return true;
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
    const StridedLoop<2> loop = coalesce<2>(shape, st);
    const bool transposed = any_order && inner_transposed(loop);
    if (transposed && copy_transposed_4byte(dst, src, loop)) return dst;
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

Tensor empty_layout(const Tensor& t) {
  // An empty view still keeps its offset inside the new storage.
  const int64_t elems = std::max(storage_extent(t.sizes(), t.strides(), t.storage_offset()), t.storage_offset());
  Tensor base = t.is_meta() ? Tensor::meta({elems}, t.dtype()) : Tensor::empty({elems}, t.dtype());
  return base.as_strided(t.sizes(), t.strides(), t.storage_offset());
}

Tensor clone_layout(const Tensor& t) {
  Tensor out = empty_layout(t);
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
