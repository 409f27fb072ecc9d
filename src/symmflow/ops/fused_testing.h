// Test helpers of the fused ops' tests (ops/fused_pointwise_test.cc,
// ops/fused_rows_test.cc): deterministic inputs, a bitwise comparison, and
// eager's result of a program (its steps run one by one on whole tensors).
#pragma once
#include <cstring>
#include <vector>

#include "symmflow/kernels/copy.h"
#include "symmflow/kernels/factories.h"
#include "symmflow/kernels/pointwise.h"
#include "symmflow/library/dispatcher.h"
#include "symmflow/ops/fused_pointwise.h"

namespace symmflow::ops {

// Deterministic values in about [-4, 4], NaN-free, of any dtype.
inline Tensor values(Shape shape, DType dtype, int salt) {
  const int64_t n = numel_of(shape);
  Tensor t = kernels::arange(Scalar(n), DType::f64);
  t = kernels::sin(kernels::mul(kernels::add(t, Scalar(double(salt))), Scalar(0.7 + 0.1 * salt)));
  t = kernels::mul(t, Scalar(4.0));
  return kernels::to_dtype(t, dtype).as_strided(shape, contiguous_strides(shape), 0);
}

inline bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.sizes() != b.sizes() || a.dtype() != b.dtype()) return false;
  Tensor ca = kernels::contiguous(a), cb = kernels::contiguous(b);
  return std::memcmp(ca.data_ptr(), cb.data_ptr(), ca.nbytes()) == 0;
}

// The steps run one by one on whole tensors, through the dispatcher: eager.
inline Tensor eager(const std::vector<Tensor>& inputs, const std::vector<FusedStep>& steps) {
  std::vector<Tensor> env = inputs;
  OpContext ctx(DispatchKey::CPU);
  for (const FusedStep& s : steps) {
    std::vector<IValue> args;
    for (const FusedOperand& a : s.args) {
      if (a.kind == FusedOperand::Kind::constant) args.push_back(a.constant);
      else args.emplace_back(env[a.kind == FusedOperand::Kind::input ? size_t(a.index) : inputs.size() + size_t(a.index)]);
    }
    env.push_back(Dispatcher::instance().get(s.op).call(ctx, args).at(0).to_tensor());
  }
  return env.back();
}

}  // namespace symmflow::ops
