// Helpers shared by the pointwise tests: make tensors from numbers, read them back.
#pragma once
#include <cstring>
#include <vector>

#include "symmflow/core/tensor.h"
#include "symmflow/kernels/copy.h"

namespace symmflow::kernels::testing {

inline constexpr DType kAllDTypes[] = {DType::f32, DType::f64, DType::bf16, DType::f16,
                                       DType::i32, DType::i64, DType::boolean};
inline constexpr DType kFloatDTypes[] = {DType::f32, DType::f64, DType::bf16, DType::f16};

// A contiguous tensor with the given values (converted like a Scalar would be).
inline Tensor make(Shape shape, const std::vector<double>& v, DType dtype = DType::f32) {
  Tensor t = Tensor::empty(shape, dtype);
  SF_CHECK(int64_t(v.size()) == t.numel(), "make: {} values for {}", v.size(), t.type_string());
  SF_DISPATCH(dtype, {
    T* p = t.data<T>();
    for (size_t i = 0; i < v.size(); ++i) {
      if constexpr (std::is_same_v<T, bool>) p[i] = v[i] != 0;
      else if constexpr (std::is_integral_v<T>) p[i] = T(v[i]);
      else if constexpr (std::is_same_v<T, double>) p[i] = v[i];
      else p[i] = T(float(v[i]));
    }
  });
  return t;
}
inline Tensor make1(const std::vector<double>& v, DType dtype = DType::f32) {
  return make({int64_t(v.size())}, v, dtype);
}

// 0, 1, 2, ... (times `scale`, plus `shift`).
inline Tensor iota(Shape shape, DType dtype = DType::f32, double scale = 1, double shift = 0) {
  std::vector<double> v(size_t(numel_of(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = double(i) * scale + shift;
  return make(shape, v, dtype);
}

// Every element in logical (row-major) order, as double.
inline std::vector<double> values(const Tensor& t) {
  Tensor c = contiguous(t);
  std::vector<double> out(size_t(c.numel()));
  SF_DISPATCH(c.dtype(), {
    const T* p = c.data<T>();
    for (size_t i = 0; i < out.size(); ++i) {
      if constexpr (std::is_same_v<T, BFloat16> || std::is_same_v<T, Half>) out[i] = float(p[i]);
      else out[i] = double(p[i]);
    }
  });
  return out;
}

// The raw bytes of every element in logical order (bitwise comparisons).
inline std::vector<uint8_t> bytes(const Tensor& t) {
  Tensor c = contiguous(t);
  std::vector<uint8_t> out(c.nbytes());
  std::memcpy(out.data(), c.data_ptr(), out.size());
  return out;
}

// Deterministic pseudo-random values in [lo, hi).
inline std::vector<double> randoms(size_t n, double lo, double hi, uint64_t seed = 1) {
  std::vector<double> v(n);
  for (auto& x : v) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    x = lo + (hi - lo) * double(seed >> 11) / double(1ull << 53);
  }
  return v;
}

}  // namespace symmflow::kernels::testing
