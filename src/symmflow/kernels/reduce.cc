#include "symmflow/kernels/reduce.h"

#include <cmath>
#include <limits>
#include <type_traits>

#include "symmflow/kernels/copy.h"

namespace symmflow::kernels {
namespace {

// Which input dims are reduced, and the geometry of the kept and reduced parts.
struct ReducePlan {
  Shape out_sizes;
  Shape kept_sizes, kept_strides;  // input strides of the kept dims
  Shape red_sizes, red_strides;    // input strides of the reduced dims
  int64_t red_count = 1;
};

std::vector<bool> reduced_mask(const char* op, int64_t ndim, const Shape& dims) {
  std::vector<bool> mask(size_t(ndim), dims.empty());
  if (ndim == 0) {
    for (int64_t d : dims) wrap_dim(d, 0);  // 0 and -1 are accepted on a 0-d tensor
    return mask;
  }
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, ndim);
    SF_CHECK(!mask[w], "{}: dim {} appears more than once in {}", op, w, shape_to_string(dims));
    mask[w] = true;
  }
  return mask;
}

ReducePlan make_plan(const char* op, const Tensor& t, const Shape& dims, bool keepdim) {
  ReducePlan p;
  auto mask = reduced_mask(op, t.dim(), dims);
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (mask[d]) {
      p.red_sizes.push_back(t.sizes()[d]);
      p.red_strides.push_back(t.is_meta() ? 0 : t.strides()[d]);
      p.red_count *= t.sizes()[d];
      if (keepdim) p.out_sizes.push_back(1);
    } else {
      p.kept_sizes.push_back(t.sizes()[d]);
      p.kept_strides.push_back(t.is_meta() ? 0 : t.strides()[d]);
      p.out_sizes.push_back(t.sizes()[d]);
    }
  }
  return p;
}

template <typename T>
constexpr bool is_half_v = std::is_same_v<T, BFloat16> || std::is_same_v<T, Half>;

// A float sum with a fixed order and a small error: the elements (in the order
// they come, row-major over the reduced dims) are summed in blocks of kBlock, the
// blocks in blocks of kBlock, and those in turn, all in float. The result depends
// only on the values and their order, never on how the loops are arranged, and its
// error grows with about 2 kBlock + n / kBlock^2 roundings instead of n. Every step
// is a float addition, so it overflows to inf where PyTorch's float sum does.
// reduce_visit calls block_done(k) after the k-th element when k % kBlock == 0.
class FloatSum {
 public:
  static constexpr int64_t kBlock = 128;  // a power of two
  void operator+=(float v) { l0_ += v; }
  void block_done(int64_t k) {
    l1_ += l0_;
    l0_ = 0;
    if ((k & (kBlock * kBlock - 1)) != 0) return;
    l2_ += l1_;
    l1_ = 0;
  }
  float value() const { return (l2_ + l1_) + l0_; }

 private:
  float l0_ = 0, l1_ = 0, l2_ = 0;
};

// The accumulator of a sum whose output is O: f64 in double, f32/bf16/f16 in float
// (PyTorch's), integers and bool in i64.
template <typename O>
using SumAcc = std::conditional_t<
    std::is_same_v<O, double>, double,
    std::conditional_t<std::is_same_v<O, float> || is_half_v<O>, FloatSum, int64_t>>;
// The number type an accumulator adds and yields.
template <typename Acc>
using acc_value_t = std::conditional_t<std::is_same_v<Acc, FloatSum>, float, Acc>;

template <typename Acc>
acc_value_t<Acc> acc_result(const Acc& a) {
  if constexpr (std::is_same_v<Acc, FloatSum>) return a.value();
  else return a;
}

template <typename Acc, typename In>
Acc to_acc(In v) {
  if constexpr (is_half_v<In>) return Acc(float(v));
  else return Acc(v);
}

template <typename Out, typename Acc>
Out from_acc(Acc a) {
  if constexpr (std::is_same_v<Out, bool>) return a != Acc(0);
  else if constexpr (is_half_v<Out>) return Out(float(a));
  else return Out(a);
}

// Calls step(acc[i], offset) for every output element i (row-major) and every
// input element of its reduction, always in row-major order of the reduced dims,
// so the result does not depend on the loop order chosen here. When the kept dims
// are the contiguous ones (e.g. a sum over dim 0), the reduced dims become the
// outer loop and each pass updates a row of accumulators. With kBlock > 0 (a power
// of two), acc.block_done(k) follows the k-th element of each reduction whenever
// k % kBlock == 0 (k counts from 1; the same k for every output).
template <int64_t kBlock = 0, typename Acc, typename Step>
void reduce_visit(const ReducePlan& p, std::vector<Acc>& acc, Step step) {
  const bool kept_inner = !p.kept_strides.empty() && p.kept_strides.back() == 1 &&
                          (p.red_strides.empty() || p.red_strides.back() != 1);
  if (kept_inner) {
    int64_t k = 0;
    for_each_offset(p.red_sizes, p.red_strides, 0, [&](int64_t rbase) {
      Acc* a = acc.data();
      for_each_offset(p.kept_sizes, p.kept_strides, rbase, [&](int64_t off) { step(*a++, off); });
      if constexpr (kBlock > 0) {
        if ((++k & (kBlock - 1)) == 0)
          for (Acc& x : acc) x.block_done(k);
      }
    });
  } else {
    Acc* a = acc.data();
    for_each_offset(p.kept_sizes, p.kept_strides, 0, [&](int64_t base) {
      // A local accumulator stays in registers: through a reference into `acc` a
      // float accumulator would be reloaded after every read of a float input,
      // which may alias it.
      Acc cur = *a;
      int64_t k = 0;
      for_each_offset(p.red_sizes, p.red_strides, base, [&](int64_t off) {
        step(cur, off);
        if constexpr (kBlock > 0) {
          if ((++k & (kBlock - 1)) == 0) cur.block_done(k);
        }
      });
      *a++ = cur;
    });
  }
}

template <typename In, typename Out>
void sum_kernel(const Tensor& t, const ReducePlan& p, const Tensor& out, bool mean) {
  using Acc = SumAcc<Out>;
  using V = acc_value_t<Acc>;
  const In* in = static_cast<const In*>(t.data_ptr());
  Out* o = static_cast<Out*>(out.data_ptr());
  std::vector<Acc> acc(size_t(out.numel()), Acc{});
  constexpr int64_t kBlock = std::is_same_v<Acc, FloatSum> ? FloatSum::kBlock : 0;
  reduce_visit<kBlock>(p, acc, [&](Acc& a, int64_t off) { a += to_acc<V>(in[off]); });
  for (size_t i = 0; i < acc.size(); ++i) {
    V total = acc_result(acc[i]);
    if constexpr (!std::is_integral_v<V>) {
      if (mean) total = total / V(p.red_count);  // PyTorch: sum, then divide in its dtype
    }
    o[i] = from_acc<Out>(total);
  }
}

template <typename T, bool kMax>
void extreme_kernel(const Tensor& t, const ReducePlan& p, const Tensor& out) {
  const T* in = static_cast<const T*>(t.data_ptr());
  T* o = static_cast<T*>(out.data_ptr());
  // Comparison type (int for bool: std::vector<bool> has no element references).
  using C = std::conditional_t<is_half_v<T>, float, std::conditional_t<std::is_same_v<T, bool>, int, T>>;
  // Start from each reduction's first element; visiting it again is harmless
  // (max(x, x) == x, NaN stays NaN).
  std::vector<C> best;
  best.reserve(size_t(out.numel()));
  for_each_offset(p.kept_sizes, p.kept_strides, 0, [&](int64_t off) { best.push_back(C(in[off])); });
  reduce_visit(p, best, [&](C& b, int64_t off) {
    const C v = C(in[off]);
    if constexpr (std::is_floating_point_v<C>) {
      // NaN sticks: once b is NaN nothing replaces it; a NaN v replaces anything.
      if (!std::isnan(b) && (std::isnan(v) || (kMax ? v > b : v < b))) b = v;
    } else if (kMax ? v > b : v < b) {
      b = v;
    }
  });
  for (size_t i = 0; i < best.size(); ++i) o[i] = T(best[i]);
}

Tensor run_sum(const char* op, const Tensor& t, const Shape& dims, bool keepdim,
               std::optional<DType> dtype, bool is_mean) {
  const DType in_dt = t.dtype();
  DType out_dt;
  if (dtype) out_dt = *dtype;
  else out_dt = is_floating(in_dt) ? in_dt : DType::i64;
  if (is_mean)
    SF_CHECK(is_floating(out_dt),
             "mean: expected a floating-point input or dtype, got input {} and dtype {}",
             t.type_string(), dtype_name(out_dt));
  ReducePlan p = make_plan(op, t, dims, keepdim);
  if (t.is_meta()) return Tensor::meta(p.out_sizes, out_dt);
  Tensor out = Tensor::empty(p.out_sizes, out_dt);
  SF_DISPATCH(in_dt, {
    using In = T;
    SF_DISPATCH(out_dt, { sum_kernel<In, T>(t, p, out, is_mean); });
  });
  return out;
}

template <bool kMax>
Tensor run_extreme(const char* op, const Tensor& t, const Shape& dims, bool keepdim) {
  ReducePlan p = make_plan(op, t, dims, keepdim);
  SF_CHECK(p.red_count > 0,
           "{}: expected a non-empty reduction, but reducing dims {} of {} covers 0 elements",
           op, shape_to_string(dims), t.type_string());
  if (t.is_meta()) return Tensor::meta(p.out_sizes, t.dtype());
  Tensor out = Tensor::empty(p.out_sizes, t.dtype());
  SF_DISPATCH(t.dtype(), { extreme_kernel<T, kMax>(t, p, out); });
  return out;
}

}  // namespace

Shape reduced_shape(const char* op, const Shape& sizes, const Shape& dims, bool keepdim) {
  auto mask = reduced_mask(op, int64_t(sizes.size()), dims);
  Shape out;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (!mask[d]) out.push_back(sizes[d]);
    else if (keepdim) out.push_back(1);
  }
  return out;
}

Tensor sum(const Tensor& t, const Shape& dims, bool keepdim, std::optional<DType> dtype) {
  return run_sum("sum", t, dims, keepdim, dtype, false);
}

Tensor mean(const Tensor& t, const Shape& dims, bool keepdim, std::optional<DType> dtype) {
  return run_sum("mean", t, dims, keepdim, dtype, true);
}

Tensor amax(const Tensor& t, const Shape& dims, bool keepdim) {
  return run_extreme<true>("amax", t, dims, keepdim);
}

Tensor amin(const Tensor& t, const Shape& dims, bool keepdim) {
  return run_extreme<false>("amin", t, dims, keepdim);
}

}  // namespace symmflow::kernels
