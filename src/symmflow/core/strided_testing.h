// Test helpers shared by strided_test.cc and compact_layout_test.cc.
#pragma once
#include "symmflow/core/tensor.h"

namespace symmflow::testing {

// A tensor of n elements whose bytes all differ (a pattern, any dtype): a
// copy that moves a byte to the wrong place cannot go unseen.
inline Tensor iota(int64_t n, DType dtype = DType::i32) {
  Tensor t = Tensor::empty({n}, dtype);
  char* p = static_cast<char*>(t.data_ptr());
  for (int64_t i = 0; i < n * int64_t(t.itemsize()); ++i) p[i] = char(i * 7 + 1);
  return t;
}

}  // namespace symmflow::testing
