#include "symmflow/kernels/factories.h"

#include <cmath>
#include <type_traits>

#include "symmflow/core/layout.h"
#include "symmflow/kernels/copy.h"
#include "symmflow/kernels/type_promotion.h"

namespace symmflow::kernels {
namespace {

Tensor make(const Shape& shape, DType dtype, bool meta) {
  for (int64_t s : shape) SF_CHECK(s >= 0, "factory: negative size in {}", shape_to_string(shape));
  return meta ? Tensor::meta(shape, dtype) : Tensor::empty(shape, dtype);
}

template <typename T>
constexpr int significand_bits() {
  if constexpr (std::is_same_v<T, double>) return 53;
  else if constexpr (std::is_same_v<T, float>) return 24;
  else if constexpr (std::is_same_v<T, Half>) return 11;
  else return 8;  // BFloat16
}

void check_floating(const char* op, DType dtype) {
  SF_CHECK(is_floating(dtype), "{}: expected a floating-point dtype, got {}", op,
           dtype_name(dtype));
}

}  // namespace

uint64_t splitmix64(uint64_t x) {
  uint64_t z = x + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

Tensor empty(const Shape& shape, DType dtype, bool meta) { return make(shape, dtype, meta); }

Tensor empty_strided(const Shape& shape, const Shape& strides, DType dtype, bool meta) {
  if (has_contiguous_strides(shape, strides)) return make(shape, dtype, meta);
  if (meta) return Tensor::meta(shape, dtype, strides);
  return Tensor::empty({storage_extent(shape, strides, 0)}, dtype).as_strided(shape, strides, 0);
}

Tensor empty_like_layout(const Tensor& t) {
  if (is_non_overlapping_and_dense(t)) return empty_strided(t.sizes(), t.strides(), t.dtype(), t.is_meta());
  const ViewGeometry g = geometry(t);
  return empty_strided(t.sizes(), elementwise_strides(t.sizes(), {&g, 1}), t.dtype(), t.is_meta());
}

Tensor zeros(const Shape& shape, DType dtype, bool meta) {
  return full(shape, Scalar(int64_t(0)), dtype, meta);
}

Tensor ones(const Shape& shape, DType dtype, bool meta) {
  return full(shape, Scalar(int64_t(1)), dtype, meta);
}

Tensor full(const Shape& shape, const Scalar& value, std::optional<DType> dtype, bool meta) {
  const DType dt = dtype ? *dtype
                   : value.is_bool()     ? DType::boolean
                   : value.is_integral() ? DType::i64
                                         : DType::f32;
  check_scalar_fits("full", value, dt);
  Tensor out = make(shape, dt, meta);
  fill_(out, value);
  return out;
}

Tensor arange(const Scalar& end, std::optional<DType> dtype, bool meta) {
  return arange(Scalar(int64_t(0)), end, Scalar(int64_t(1)), dtype, meta);
}

Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step,
              std::optional<DType> dtype, bool meta) {
  const bool all_int = !start.is_floating() && !end.is_floating() && !step.is_floating();
  const DType dt = dtype.value_or(all_int ? DType::i64 : DType::f32);
  SF_CHECK(dt != DType::boolean, "arange: not implemented for dtype bool");
  // The length always comes from the doubles as given, except for i64 (below).
  const double s = start.to_double(), e = end.to_double(), st = step.to_double();
  int64_t n;
  Tensor out;
  if (!is_floating(dt)) {
    // PyTorch (RangeFactories.cpp) converts start, end and step to int64 first,
    // truncating, with an overflow check: arange(0, 3, 0.5, dtype=i64) has step 0.
    for (const Scalar* v : {&start, &end, &step}) check_scalar_fits("arange", *v, DType::i64);
    const int64_t a = start.to_int(), b = end.to_int(), c = step.to_int();
    SF_CHECK(c != 0, "arange: step must be nonzero");
    SF_CHECK((c > 0 && b >= a) || (c < 0 && b <= a),
             "arange: the bounds [{}, {}) are inconsistent with the sign of step {}", a, b, c);
    // i64 counts in integers; other integer dtypes count from the doubles, so
    // arange(0, 3.5, 1, dtype=i32) has 4 elements and the i64 one 3 (PyTorch).
    const double len = dt == DType::i64 ? double((b - a + c - (c > 0 ? 1 : -1)) / c)
                                        : std::ceil((e - s) / st);
    SF_CHECK(len >= 0 && len < 0x1p63, "arange: invalid size {}, possible overflow?", len);
    n = int64_t(len);
    out = make({n}, dt, meta);
    if (meta) return out;
    SF_DISPATCH(dt, {
      T* p = out.data<T>();
      for (int64_t i = 0; i < n; ++i) p[i] = Scalar(int64_t(uint64_t(a) + uint64_t(i) * uint64_t(c))).to<T>();
    });
    return out;
  }
  // Floating: bounds and values in PyTorch's accumulate type, double for f32/f64 and
  // float for bf16/f16 (so the bounds must fit a float).
  const bool half = dt == DType::bf16 || dt == DType::f16;
  if (half)
    for (const Scalar* v : {&start, &end, &step}) check_scalar_fits("arange", *v, DType::f32);
  const double xs = half ? float(s) : s, xe = half ? float(e) : e, xst = half ? float(st) : st;
  SF_CHECK(xst != 0, "arange: step must be nonzero");
  SF_CHECK(std::isfinite(xs) && std::isfinite(xe), "arange: bounds must be finite, got [{}, {})",
           xs, xe);
  SF_CHECK((xst > 0 && xe >= xs) || (xst < 0 && xe <= xs),
           "arange: the bounds [{}, {}) are inconsistent with the sign of step {}", xs, xe, xst);
  const double len = std::ceil((e - s) / st);
  SF_CHECK(len >= 0 && len < 0x1p63, "arange: invalid size {}, possible overflow?", len);
  n = int64_t(len);
  out = make({n}, dt, meta);
  if (meta) return out;
  SF_DISPATCH(dt, {
    if constexpr (std::is_floating_point_v<T>) {
      T* p = out.data<T>();
      for (int64_t i = 0; i < n; ++i) p[i] = T(xs + double(i) * xst);
    } else if constexpr (!std::is_integral_v<T>) {  // bf16, f16: computed in float
      T* p = out.data<T>();
      const float fs = float(xs), fst = float(xst);
      for (int64_t i = 0; i < n; ++i) p[i] = T(fs + fst * float(i));
    }
  });
  return out;
}

Tensor rand(const Shape& shape, DType dtype, uint64_t seed, bool meta) {
  check_floating("rand", dtype);
  Tensor out = make(shape, dtype, meta);
  if (meta) return out;
  const uint64_t key = splitmix64(seed);
  const int64_t n = out.numel();
  SF_DISPATCH(dtype, {
    if constexpr (!std::is_integral_v<T>) {
      constexpr int p = significand_bits<T>();
      T* o = out.data<T>();
      for (int64_t i = 0; i < n; ++i)
        o[i] = Scalar(std::ldexp(double(splitmix64(key + uint64_t(i)) >> (64 - p)), -p)).to<T>();
    }
  });
  return out;
}

Tensor randn(const Shape& shape, DType dtype, uint64_t seed, bool meta) {
  check_floating("randn", dtype);
  Tensor out = make(shape, dtype, meta);
  if (meta) return out;
  const uint64_t key = splitmix64(seed);
  const int64_t n = out.numel();
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  SF_DISPATCH(dtype, {
    if constexpr (!std::is_integral_v<T>) {
      T* o = out.data<T>();
      for (int64_t i = 0; i < n; ++i) {
        const uint64_t c = 2 * uint64_t(i);
        const double u1 = std::ldexp(double((splitmix64(key + c) >> 11) + 1), -53);
        const double u2 = std::ldexp(double(splitmix64(key + c + 1) >> 11), -53);
        o[i] = Scalar(std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2)).to<T>();
      }
    }
  });
  return out;
}

Tensor randint(int64_t low, int64_t high, const Shape& shape, DType dtype, uint64_t seed,
               bool meta) {
  SF_CHECK(low < high, "randint: expected low < high, got low {} and high {}", low, high);
  SF_CHECK(dtype != DType::boolean, "randint: bool dtype is not supported");
  Tensor out = make(shape, dtype, meta);
  if (meta) return out;
  const uint64_t key = splitmix64(seed);
  const uint64_t range = uint64_t(high) - uint64_t(low);
  const int64_t n = out.numel();
  SF_DISPATCH(dtype, {
    T* o = out.data<T>();
    for (int64_t i = 0; i < n; ++i)
      o[i] = Scalar(int64_t(uint64_t(low) + splitmix64(key + uint64_t(i)) % range)).to<T>();
  });
  return out;
}

}  // namespace symmflow::kernels
