// Helpers shared by the kernels' tests: tensors from literal values, iota, and
// values back as doubles (exact for every dtype's test-sized integers).
#pragma once
#include <vector>

#include "symmflow/core/scalar.h"
#include "symmflow/core/tensor.h"
#include "symmflow/kernels/copy.h"

namespace symmflow::kernels::testing {

// A contiguous tensor of dtype t and shape s holding v (converted as a Scalar would).
inline Tensor from(std::vector<double> v, Shape s, DType t = DType::f32) {
  Tensor out = Tensor::empty(s, t);
  SF_DISPATCH(t, {
    T* p = out.data<T>();
    for (size_t i = 0; i < v.size(); ++i) p[i] = Scalar(v[i]).to<T>();
  });
  return out;
}

// 0, 1, 2, ... in shape s.
inline Tensor iota(Shape s, DType t = DType::f32) {
  std::vector<double> v(size_t(numel_of(s)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = double(i);
  return from(v, s, t);
}

// Every element, in logical order, as double.
inline std::vector<double> values(const Tensor& t) {
  Tensor c = to_dtype(t, DType::f64);
  const double* p = c.data<double>();
  return std::vector<double>(p, p + c.numel());
}

}  // namespace symmflow::kernels::testing
