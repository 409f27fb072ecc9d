// The seeded input fill of docs/ir.md (see input_fill.h), on the shared strided
// loops so any view is filled in logical order. Usage: fill_input(t, seed, k, rank).
#include "symmflow/exec/input_fill.h"

#include <cstring>
#include <type_traits>

#include "symmflow/core/error.h"
#include "symmflow/kernels/loops.h"

namespace symmflow::exec {

namespace {

// The value of hash h as element type T, exactly as docs/ir.md states it.
template <typename T>
T value_of(uint64_t h) {
  if constexpr (std::is_same_v<T, bool>) {
    return h % 2 != 0;
  } else if constexpr (std::is_integral_v<T>) {
    return T(int64_t(h % 201) - 100);
  } else {
    // A multiple of 1/16 in [-8, 7.9375]: 8 significant bits at most, exact in
    // bf16 and f16, so converting through float rounds nothing.
    const double v = (double(h % 256) - 128.0) / 16.0;
    if constexpr (std::is_same_v<T, double>) return v;
    else return T(float(v));
  }
}

void check_indices(const char* what, int input_index, int rank) {
  SF_CHECK(input_index >= 0 && rank >= 0,
           "{}: expected a non-negative input index and rank, got input {} on rank {}", what,
           input_index, rank);
}

}  // namespace

uint64_t input_hash(uint64_t seed, int input_index, int rank, uint64_t i) {
  // Unsigned arithmetic wraps mod 2^64, as the formula says.
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + (uint64_t(input_index) + 1) * 0xBF58476D1CE4E5B9ull +
               uint64_t(rank) * 0x94D049BB133111EBull + i;
  uint64_t z = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (z ^ (z >> 31)) >> 32;
}

void fill_input(const Tensor& t, uint64_t seed, int input_index, int rank) {
  check_indices("fill_input", input_index, rank);
  SF_CHECK(t.defined() && !t.is_meta(),
           "fill_input: expected a tensor with data for input {}, got {}", input_index,
           t.defined() ? t.type_string() + " (meta)" : "an undefined tensor");
  std::array<char*, 1> base{static_cast<char*>(t.data_ptr())};
  std::array<std::vector<int64_t>, 1> strides{kernels::byte_strides(t)};
  // for_each_run visits elements in row-major logical order, so a running count
  // is the logical index i.
  uint64_t i = 0;
  SF_DISPATCH(t.dtype(), {
    kernels::for_each_run<1>(t.sizes(), base, strides, [&](char** p, const int64_t* s, int64_t n) {
      char* d = p[0];
      for (int64_t k = 0; k < n; ++k, d += s[0]) {
        const T v = value_of<T>(input_hash(seed, input_index, rank, i++));
        std::memcpy(d, &v, sizeof(T));
      }
    });
  });
}

IValue scalar_input(DType dtype, uint64_t seed, int input_index, int rank) {
  check_indices("scalar_input", input_index, rank);
  const uint64_t h = input_hash(seed, input_index, rank, 0);
  switch (dtype) {
    case DType::i64: return IValue(value_of<int64_t>(h));
    case DType::f64: return IValue(value_of<double>(h));
    case DType::boolean: return IValue(value_of<bool>(h));
    default: break;
  }
  fail("scalar_input: a scalar graph input is i64, f64 or bool, got {} (input {})",
       dtype_name(dtype), input_index);
}

std::vector<IValue> seeded_inputs(const ir::Graph& g, uint64_t seed, int rank) {
  std::vector<IValue> in;
  for (size_t k = 0; k < g.inputs().size(); ++k) {
    const ir::Value* v = g.inputs()[k];
    if (!v->is_tensor()) {
      in.push_back(scalar_input(v->kind() == ir::ValueKind::Int ? DType::i64
                                : v->kind() == ir::ValueKind::Float ? DType::f64 : DType::boolean,
                                seed, int(k), rank));
      continue;
    }
    Tensor t = Tensor::empty(v->type().sizes.to_vector(), v->type().dtype);
    fill_input(t, seed, int(k), rank);
    in.emplace_back(t);
  }
  return in;
}

}  // namespace symmflow::exec
