// Strided views walked in row-major order as runs: the one iterator that the
// kernels (N operands, broadcast), the collectives and P2P (one tensor to or from
// a contiguous buffer) share, and pack/unpack built on it.
//
//   pack(t, buf);                                   // t's elements, row-major, into buf
//   unpack(buf, t);                                 // the inverse
//   StridedLayout l = strided_layout(t);            // once, then any element range:
//   pack_elements(l, first, count, buf);            //   elements [first, first + count)
//   for_each_run<2>(shape, {out, in}, {out_strides, in_strides},
//                   [](char** p, const int64_t* s, int64_t n) { ... n elements ... });
//
// Coalescing: size-1 dims are dropped and a dim is merged into its outer neighbour
// when every operand is contiguous across the two (stride[outer] == stride[inner] *
// size[inner]), so a dense tensor is one run and a row slice one run per row. The
// walk order is row-major whatever the strides (negative or zero included).
#pragma once
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "symmflow/core/tensor.h"

namespace symmflow {

// N operands over one logical shape, coalesced. Strides are in any unit the caller
// chooses (bytes for the pointer loops below), per operand, one per dim.
template <size_t N>
struct StridedLoop {
  std::vector<int64_t> sizes;                   // outer to inner; never empty ({1}: one element)
  std::array<std::vector<int64_t>, N> strides;  // strides[k][d]: operand k, dim d
  int64_t numel = 0;
};

// `strides[k][d]` is operand k's stride of dim d of `shape` (any indexable lists).
template <size_t N, typename StrideLists>
StridedLoop<N> coalesce(std::span<const int64_t> shape, const StrideLists& strides) {
  StridedLoop<N> loop;
  loop.numel = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    loop.numel *= shape[d];
    if (shape[d] == 1) continue;
    bool merge = !loop.sizes.empty();
    for (size_t k = 0; k < N && merge; ++k)
      merge = loop.strides[k].back() == strides[k][d] * shape[d];
    if (merge) {
      loop.sizes.back() *= shape[d];
      for (size_t k = 0; k < N; ++k) loop.strides[k].back() = strides[k][d];
    } else {
      loop.sizes.push_back(shape[d]);
      for (size_t k = 0; k < N; ++k) loop.strides[k].push_back(strides[k][d]);
    }
  }
  if (loop.sizes.empty()) {  // a scalar, or only size-1 dims
    loop.sizes = {1};
    for (auto& s : loop.strides) s = {0};
  }
  return loop;
}

// Calls fn(offsets, inner_strides, n) for elements [first, first + count) of the
// loop in row-major order, one call per run along the innermost dim: operand k's
// run starts at offsets[k] (in the strides' unit) and steps by inner_strides[k].
// Only the first and the last run may be partial rows.
template <size_t N, typename F>
void for_each_run_range(const StridedLoop<N>& loop, int64_t first, int64_t count, F&& fn) {
  if (count <= 0) return;
  const size_t dims = loop.sizes.size(), inner = dims - 1;
  std::vector<int64_t> index(dims, 0);  // multi-index of the current run's first element
  std::array<int64_t, N> offset{}, inner_stride;
  int64_t rest = first;
  for (size_t d = dims; d-- > 0;) {
    index[d] = rest % loop.sizes[d];
    rest /= loop.sizes[d];
    for (size_t k = 0; k < N; ++k) offset[k] += index[d] * loop.strides[k][d];
  }
  for (size_t k = 0; k < N; ++k) inner_stride[k] = loop.strides[k][inner];
  while (true) {
    const int64_t n = std::min(count, loop.sizes[inner] - index[inner]);
    fn(offset, inner_stride.data(), n);
    if ((count -= n) == 0) return;
    for (size_t k = 0; k < N; ++k) offset[k] -= index[inner] * inner_stride[k];  // row start
    index[inner] = 0;
    // Odometer over the outer dims.
    size_t d = inner;
    while (true) {
      if (d == 0) return;  // past the last element
      --d;
      if (++index[d] < loop.sizes[d]) {
        for (size_t k = 0; k < N; ++k) offset[k] += loop.strides[k][d];
        break;
      }
      for (size_t k = 0; k < N; ++k) offset[k] -= loop.strides[k][d] * (loop.sizes[d] - 1);
      index[d] = 0;
    }
  }
}

// Pointer form over every element: operand k starts at base[k] with byte strides
// strides[k] (0 = broadcast); fn(char** run_starts, const int64_t* byte_strides, n).
template <size_t N, typename F>
void for_each_run(std::span<const int64_t> shape, std::array<char*, N> base,
                  const std::array<std::vector<int64_t>, N>& strides, F&& fn) {
  const StridedLoop<N> loop = coalesce<N>(shape, strides);
  for_each_run_range(loop, 0, loop.numel,
                     [&](const std::array<int64_t, N>& offset, const int64_t* s, int64_t n) {
                       std::array<char*, N> p;
                       for (size_t k = 0; k < N; ++k) p[k] = base[k] + offset[k];
                       fn(p.data(), s, n);
                     });
}

// t's strides in bytes.
std::vector<int64_t> byte_strides(const Tensor& t);

// One tensor's elements, coalesced, byte strides: computed once, then walked over
// any element range (P2P sends a message in chunks).
struct StridedLayout {
  char* data = nullptr;  // element 0 (null when empty)
  size_t itemsize = 1;
  StridedLoop<1> loop;
  int64_t numel() const { return loop.numel; }
  // One run of adjacent elements: pack and unpack are a single copy.
  bool contiguous() const {
    return loop.sizes.size() == 1 && (loop.numel <= 1 || loop.strides[0][0] == int64_t(itemsize));
  }
};
StridedLayout strided_layout(const Tensor& t);

// n elements of `itemsize` bytes, `stride_bytes` apart from `element`, to
// (gather) or from (scatter) the contiguous `buffer`.
void gather_elements(const char* element, int64_t stride_bytes, char* buffer, int64_t n, size_t itemsize);
void scatter_elements(const char* buffer, char* element, int64_t stride_bytes, int64_t n, size_t itemsize);

// n elements of `itemsize` bytes from `src`, `src_stride` bytes apart, to
// `dst`, `dst_stride` bytes apart (gather and scatter are the cases where one
// side is a contiguous buffer).
void copy_strided_elements(char* dst, int64_t dst_stride, const char* src, int64_t src_stride, int64_t n,
                           size_t itemsize);

// The default byte copier. Callers with a faster one for bulk data (the
// collectives' copy_bytes) pass it instead.
struct MemcpyBytes {
  void operator()(void* dst, const void* src, size_t n) const { std::memcpy(dst, src, n); }
};

// Elements [first, first + count) of the layout, row-major, to or from the
// contiguous buffer. A run already in place (buffer == the run) is not copied.
template <typename CopyBytes = MemcpyBytes>
void pack_elements(const StridedLayout& l, int64_t first, int64_t count, void* dst,
                   CopyBytes copy = {}) {
  char* out = static_cast<char*>(dst);
  const int64_t isz = int64_t(l.itemsize);
  if (l.contiguous()) {
    if (count > 0 && l.data + first * isz != out) copy(out, l.data + first * isz, size_t(count * isz));
    return;
  }
  for_each_run_range(l.loop, first, count, [&](const std::array<int64_t, 1>& offset, const int64_t* s, int64_t n) {
    const char* run = l.data + offset[0];
    if (s[0] == isz || n == 1) {
      if (run != out) copy(out, run, size_t(n * isz));
    } else {
      gather_elements(run, s[0], out, n, l.itemsize);
    }
    out += n * isz;
  });
}

template <typename CopyBytes = MemcpyBytes>
void unpack_elements(const void* src, const StridedLayout& l, int64_t first, int64_t count,
                     CopyBytes copy = {}) {
  const char* in = static_cast<const char*>(src);
  const int64_t isz = int64_t(l.itemsize);
  if (l.contiguous()) {
    if (count > 0 && l.data + first * isz != in) copy(l.data + first * isz, in, size_t(count * isz));
    return;
  }
  for_each_run_range(l.loop, first, count, [&](const std::array<int64_t, 1>& offset, const int64_t* s, int64_t n) {
    char* run = l.data + offset[0];
    if (s[0] == isz || n == 1) {
      if (run != in) copy(run, in, size_t(n * isz));
    } else {
      scatter_elements(in, run, s[0], n, l.itemsize);
    }
    in += n * isz;
  });
}

// The bytes of `src`'s elements, row-major, to the same row-major byte
// positions of `dst` (the same byte count; the shapes, and even the element
// sizes, may differ): strided to strided, no contiguous buffer in between when
// the coalesced shapes and element sizes are equal (a column to a column) or
// one side is one run. Other pairs go through a 4 KiB buffer on the stack,
// chunk by chunk. P2P's puts into and reads from a peer's strided symmetric
// buffer (core/compact_layout.h).
template <typename CopyBytes = MemcpyBytes>
void copy_elements(const StridedLayout& dst, const StridedLayout& src, CopyBytes copy = {}) {
  if (src.numel() == 0) return;
  if (dst.contiguous()) return pack_elements(src, 0, src.numel(), dst.data, copy);
  if (src.contiguous()) return unpack_elements(src.data, dst, 0, dst.numel(), copy);
  const int64_t isz = int64_t(src.itemsize);
  if (dst.itemsize == src.itemsize && dst.loop.sizes == src.loop.sizes) {
    StridedLoop<2> loop;
    loop.sizes = dst.loop.sizes;
    loop.strides = {dst.loop.strides[0], src.loop.strides[0]};
    loop.numel = src.numel();
    for_each_run_range(loop, 0, loop.numel, [&](const std::array<int64_t, 2>& offset, const int64_t* s, int64_t count) {
      char* to = dst.data + offset[0];
      const char* from = src.data + offset[1];
      if (s[0] == isz && s[1] == isz) copy(to, from, size_t(count * isz));
      else copy_strided_elements(to, s[0], from, s[1], count, src.itemsize);
    });
    return;
  }
  // Element sizes are powers of two up to 16: a chunk holds whole elements of both.
  alignas(64) char buffer[4096];
  const int64_t total = src.numel() * isz, dsz = int64_t(dst.itemsize);
  for (int64_t first = 0; first < total; first += int64_t(sizeof buffer)) {
    const int64_t bytes = std::min<int64_t>(int64_t(sizeof buffer), total - first);
    pack_elements(src, first / isz, bytes / isz, buffer, copy);
    unpack_elements(buffer, dst, first / dsz, bytes / dsz, copy);
  }
}

// Every element of t, row-major, to or from the contiguous dst/src (t.nbytes()).
// Contiguous t: one copy (none when the buffer is t's own memory). These are
// templates so that a non-template wrapper of the same name (the collectives'
// pack(t, dst), which passes their copy_bytes) wins overload resolution when
// argument-dependent lookup finds both.
template <typename CopyBytes = MemcpyBytes>
void pack(const Tensor& t, void* dst, CopyBytes copy = {}) {
  if (t.numel() == 0) return;
  if (t.is_contiguous()) {
    if (t.data_ptr() != dst) copy(dst, t.data_ptr(), t.nbytes());
    return;
  }
  pack_elements(strided_layout(t), 0, t.numel(), dst, copy);
}

template <typename CopyBytes = MemcpyBytes>
void unpack(const void* src, const Tensor& t, CopyBytes copy = {}) {
  if (t.numel() == 0) return;
  if (t.is_contiguous()) {
    if (t.data_ptr() != src) copy(t.data_ptr(), src, t.nbytes());
    return;
  }
  unpack_elements(src, strided_layout(t), 0, t.numel(), copy);
}

}  // namespace symmflow
