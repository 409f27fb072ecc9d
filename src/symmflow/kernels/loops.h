// Strided loops over N operands that share one logical shape. Each operand is a
// base pointer and its strides in *bytes* for that shape (stride 0 = broadcast).
// Dimensions that are contiguous for every operand are collapsed, so the common
// dense case becomes one long inner run and the compiler can vectorize `fn`.
//
//   for_each_run<2>(shape, {out_ptr, in_ptr}, {out_strides, in_strides},
//                   [](char** p, const int64_t* s, int64_t n) { ... n elements ... });
#pragma once
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "symmflow/core/tensor.h"

namespace symmflow::kernels {

// Byte strides of `t` viewed at `shape` (broadcast dims get stride 0).
std::vector<int64_t> broadcast_byte_strides(const Tensor& t, std::span<const int64_t> shape);
std::vector<int64_t> byte_strides(const Tensor& t);

template <size_t N, typename F>
void for_each_run(std::span<const int64_t> shape, std::array<char*, N> base,
                  std::array<std::vector<int64_t>, N> strides, F&& fn) {
  // Collapse: drop size-1 dims, merge dim i into i+1 when every operand is
  // contiguous across them (stride[i] == stride[i+1] * size[i+1]).
  std::vector<int64_t> sz;
  std::array<std::vector<int64_t>, N> st;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) return;
    if (shape[d] == 1) continue;
    bool merge = !sz.empty();
    for (size_t k = 0; k < N && merge; ++k) merge = st[k].back() == strides[k][d] * shape[d];
    if (merge) {
      sz.back() *= shape[d];
      for (size_t k = 0; k < N; ++k) st[k].back() = strides[k][d];
    } else {
      sz.push_back(shape[d]);
      for (size_t k = 0; k < N; ++k) st[k].push_back(strides[k][d]);
    }
  }
  if (sz.empty()) {  // a single element
    std::array<int64_t, N> s{};
    fn(base.data(), s.data(), int64_t(1));
    return;
  }
  const size_t nd = sz.size();
  std::array<int64_t, N> inner;
  for (size_t k = 0; k < N; ++k) inner[k] = st[k][nd - 1];
  std::vector<int64_t> idx(nd, 0);
  std::array<char*, N> p = base;
  while (true) {
    fn(p.data(), inner.data(), sz[nd - 1]);
    // Odometer over the outer dims.
    size_t d = nd - 1;
    while (true) {
      if (d == 0) return;
      --d;
      if (++idx[d] < sz[d]) {
        for (size_t k = 0; k < N; ++k) p[k] += st[k][d];
        break;
      }
      for (size_t k = 0; k < N; ++k) p[k] -= st[k][d] * (sz[d] - 1);
      idx[d] = 0;
    }
  }
}

}  // namespace symmflow::kernels
