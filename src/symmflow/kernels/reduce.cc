#include "symmflow/kernels/reduce.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <type_traits>

#include "symmflow/core/overlap.h"
#include "symmflow/kernels/copy.h"
#include "symmflow/kernels/lane_extreme.h"
#include "symmflow/kernels/simd.h"
#include "symmflow/kernels/sum_order.h"
#include "symmflow/kernels/views.h"

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

// The accumulator type of a sum whose output is O: double for f64, float for
// f32/bf16/f16 (PyTorch's), i64 for integers and bool.
template <typename O>
using sum_acc_t = std::conditional_t<std::is_same_v<O, double>, double,
                                     std::conditional_t<std::is_same_v<O, float> || is_half_v<O>, float, int64_t>>;

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

// Whether the kept dims are the inner, contiguous ones (e.g. a sum over dim 0):
// then the reduced dims are the outer loop and each pass updates a row of
// accumulators.
bool kept_inner(const ReducePlan& p) {
  return !p.kept_strides.empty() && p.kept_strides.back() == 1 &&
         (p.red_strides.empty() || p.red_strides.back() != 1);
}

// Calls step(acc[i], offset) for every output element i (row-major) and every
// input element of its reduction, in row-major order of the reduced dims (for
// max/min, any, all; sums keep their own order, sum_order.h).
template <typename Acc, typename Step>
void reduce_visit(const ReducePlan& p, std::vector<Acc>& acc, Step step) {
  if (kept_inner(p)) {
    for_each_offset(p.red_sizes, p.red_strides, 0, [&](int64_t rbase) {
      Acc* a = acc.data();
      for_each_offset(p.kept_sizes, p.kept_strides, rbase, [&](int64_t off) { step(*a++, off); });
    });
  } else {
    Acc* a = acc.data();
    for_each_offset(p.kept_sizes, p.kept_strides, 0, [&](int64_t base) {
      // A local accumulator stays in registers: through a reference into `acc` a
      // float accumulator would be reloaded after every read of a float input,
      // which may alias it.
      Acc cur = *a;
      for_each_offset(p.red_sizes, p.red_strides, base, [&](int64_t off) { step(cur, off); });
      *a++ = cur;
    });
  }
}

// Element k of every reduction with the kept dims inner comes from pass k over a
// row; `step(a, rbase)` adds that row's elements (input offset rbase on) to lane
// k % 32 of the sums (`a`, a row of l0, lane-major: lane j of sum i at [j * count + i]), and
// pass_rows ends the cascade blocks (l1, l2: sum_order.h) and folds the lanes,
// leaving the totals in l0[0..count).
template <typename V, typename Step>
void pass_rows(const ReducePlan& p, V* l0, V* l1, V* l2, int64_t count, Step step) {
  using Sum = LaneSum<V>;
  const int64_t lanes = Sum::kLanes * count;
  const bool cascaded = p.red_count >= Sum::kBlock;
  std::fill_n(l0, lanes, V(0));
  if (cascaded) std::fill_n(l1, lanes, V(0)), std::fill_n(l2, lanes, V(0));
  int64_t k = 0;
  for_each_offset(p.red_sizes, p.red_strides, 0, [&](int64_t rbase) {
    step(l0 + (k % Sum::kLanes) * count, rbase);
    if (++k % Sum::kBlock != 0) return;
    for (int64_t i = 0; i < lanes; ++i) l1[i] += l0[i], l0[i] = V(0);
    if (k % (Sum::kBlock * 128) != 0) return;
    for (int64_t i = 0; i < lanes; ++i) l2[i] += l1[i], l1[i] = V(0);
  });
  Sum::value_rows(l0, l1, l2, count, cascaded);
}

// Columns per block of a sum over an outer dim (LaneSum::column_sums): the
// block's 32 lanes (8 KiB of float) stay in L1 while the input rows pass. All
// the columns at once (the 32 lanes of a 256-column sum: 32 KiB, the whole L1 of
// the EPYC this was measured on) were reloaded from L2 on every row: 6.7 us
// against 5.9 for a 256 x 256 f32 sum over dim 0. Blocks read each row in pieces,
// which pays only while the input stays in L2: a 1024 x 1024 sum took 103 us
// whole, 125 in blocks. Either way the order is the same (sum_order.h).
constexpr int64_t kColumnBlock = 64;
constexpr int64_t kBlockedInputBytes = int64_t(512) << 10;

// Whether an outer-dim reduction over one dim reads an input that stays in L2
// (kBlockedInputBytes): the column sums' and column extremes' register and
// block paths pay only then.
template <typename V>
bool one_dim_in_l2(const ReducePlan& p, int64_t outputs) {
  return p.red_sizes.size() == 1 && p.red_count * outputs * int64_t(sizeof(V)) <= kBlockedInputBytes;
}

// LaneSum::column_sums of columns summed over fewer than kBlock rows (no
// cascade), the lanes in registers: for each piece of kV 32-byte vectors of
// columns, lanes p .. p + kG - 1 (rows p .. p + kG - 1 of every 32) in 16
// accumulators at a time, then value_rows' fold (w = 16, 8, 4, then the last four
// left to right): the same adds in the same order. One load per vector add,
// against column_sums' load, add and store of a lane row in L1. Each pass walks
// down the piece's columns, so the input should sit in L2 (the caller's
// kBlockedInputBytes). 256 x 256 f32 over dim 0, a call from Python: 8.5 us
// before; pieces of 1, 2, 4, 8 and 16 vectors 11.4, 6.4, 5.0, 4.9 and 6.2 us
// (docs/performance.md, "Round 5"). Returns the columns done (whole pieces; the
// caller sums the rest).
template <typename V>
int64_t short_column_sums(const V* x, int64_t n, int64_t stride, int64_t count, V* totals) {
  using Sum = LaneSum<V>;
  static constexpr int kW = int(32 / sizeof(V));  // lanes per vector (static: the lambdas use them uncaptured)
  static constexpr int kV = 8;                    // vectors per row piece
  static constexpr int kG = 16 / kV;              // lanes per pass: kV * kG = 16 accumulators
  typedef V Vec __attribute__((vector_size(32)));
  const int64_t whole = count - count % (kV * kW);
  simd::run([&] {
    for (int64_t c = 0; c < whole; c += kV * kW) {
      Vec lane[kV][Sum::kLanes];
      for (int p = 0; p < Sum::kLanes; p += kG) {
        Vec acc[kV][kG] = {};  // +0, as a lane starts
        auto add = [&](int64_t k, int j) {
#pragma GCC unroll 8
          for (int h = 0; h < kV; ++h) {  // a vector per memcpy: gcc moved a pair through the stack
            Vec v;
            std::memcpy(&v, x + k * stride + c + h * kW, sizeof v);
            acc[h][j] += v;
          }
        };
        int64_t k0 = 0;
        for (; k0 + Sum::kLanes <= n; k0 += Sum::kLanes)
#pragma GCC unroll 16
          for (int j = 0; j < kG; ++j) add(k0 + p + j, j);
        for (int j = 0; j < kG && k0 + p + j < n; ++j) add(k0 + p + j, j);
#pragma GCC unroll 16
        for (int j = 0; j < kG; ++j)
#pragma GCC unroll 8
          for (int h = 0; h < kV; ++h) lane[h][p + j] = acc[h][j];
      }
#pragma GCC unroll 8
      for (int h = 0; h < kV; ++h) {
        Vec* l = lane[h];
#pragma GCC unroll 8
        for (int w = Sum::kLanes / 2; w >= 4; w /= 2)
#pragma GCC unroll 16
          for (int j = 0; j < w; ++j) l[j] = l[j] + l[j + w];
        const Vec t = ((l[0] + l[1]) + l[2]) + l[3];
        std::memcpy(totals + c + h * kW, &t, sizeof t);
      }
    }
  });
  return whole;
}

// Floating sums (V = float or double) in sum_order.h's order, one total per
// output element. Three loops, one order: a dense reduced run is summed in place;
// with the kept dims inner, element k of every reduction comes from pass k over a
// row (one reduced dim and dense kept dims: LaneSum::column_sums, by blocks of
// columns; else pass_rows); otherwise each reduction's elements are gathered into
// blocks.
template <typename In, typename V>
void float_sums(const Tensor& t, const ReducePlan& p, V* totals, int64_t outputs) {
  using Sum = LaneSum<V>;
  const In* in = static_cast<const In*>(t.data_ptr());
  if (kept_inner(p)) {
    const bool columns = std::is_same_v<In, V> && p.red_sizes.size() == 1 && is_one_run(p.kept_sizes, p.kept_strides);
    const bool blocked = columns && one_dim_in_l2<V>(p, outputs);
    int64_t done = 0;  // leading columns already summed
    if (blocked && p.red_count < Sum::kBlock) {
      done = short_column_sums(reinterpret_cast<const V*>(in), p.red_count, p.red_strides[0], outputs, totals);
      if (done == outputs) return;
    }
    const int64_t width = blocked ? std::min(outputs, kColumnBlock) : outputs;
    // l1 and l2 only when a block can end (a sum of up to one block needs l0 only).
    const int64_t lanes = Sum::kLanes * width, upper = p.red_count >= Sum::kBlock ? lanes : 0;
    std::vector<V> l(size_t(lanes + 2 * upper));
    V *l0 = l.data(), *l1 = l0 + lanes, *l2 = l1 + upper;
    if (columns) {
      const V* x = reinterpret_cast<const V*>(in);
      for (int64_t c0 = done; c0 < outputs; c0 += width) {
        const int64_t w = std::min(width, outputs - c0);
        // A clone per block (simd.h): inlined into a larger loop nest, the same
        // adds ran 1.5x slower (measured at 256 x 256).
        simd::run([&] { Sum::column_sums(x + c0, p.red_count, p.red_strides[0], w, l0, l1, l2); });
        std::copy_n(l0, w, totals + c0);
      }
      return;
    }
    // One AVX2 clone for all the passes (simd.h; a clone entered per row cost as
    // much as a short row's adds).
    simd::run([&] {
      pass_rows(p, l0, l1, l2, outputs, [&](V* a, int64_t rbase) {
        for_each_offset(p.kept_sizes, p.kept_strides, rbase, [&](int64_t off) { *a++ += to_acc<V>(in[off]); });
      });
    });
    std::copy_n(l0, outputs, totals);
    return;
  }
  const bool dense = std::is_same_v<In, V> && is_one_run(p.red_sizes, p.red_strides);
  int64_t o = 0;
  if (dense) {  // every row's sum in one AVX2 clone (simd.h): short rows cost little more than their data
    simd::run([&] {
      for_each_offset(p.kept_sizes, p.kept_strides, 0, [&](int64_t base) {
        totals[o++] = ordered_sum_here(reinterpret_cast<const V*>(in + base), p.red_count);
      });
    });
    return;
  }
  // Otherwise each reduction's elements are gathered into blocks.
  std::vector<V> buf(static_cast<size_t>(Sum::kBlock));
  for_each_offset(p.kept_sizes, p.kept_strides, 0, [&](int64_t base) {
    Sum s;
    int64_t n = 0;
    for_each_offset(p.red_sizes, p.red_strides, base, [&](int64_t off) {
      buf[n++] = to_acc<V>(in[off]);
      if (n == Sum::kBlock) s.add(buf.data(), n), n = 0;
    });
    s.add(buf.data(), n);
    totals[o++] = s.value();
  });
}

template <typename In, typename Out>
void sum_kernel(const Tensor& t, const ReducePlan& p, const Tensor& out, bool mean) {
  using V = sum_acc_t<Out>;
  Out* o = static_cast<Out*>(out.data_ptr());
  std::vector<V> acc(size_t(out.numel()), V(0));
  if (p.red_count > 0) {
    if constexpr (std::is_integral_v<V>) {
      const In* in = static_cast<const In*>(t.data_ptr());
      reduce_visit(p, acc, [&](V& a, int64_t off) {  // wraps, as PyTorch's i64 sum
        a = V(uint64_t(a) + uint64_t(to_acc<V>(in[off])));
      });
    } else {
      float_sums<In, V>(t, p, acc.data(), out.numel());
    }
  }
  for (size_t i = 0; i < acc.size(); ++i) {
    V total = acc[i];
    if constexpr (!std::is_integral_v<V>) {
      if (mean) total = total / V(p.red_count);  // PyTorch: sum, then divide in its dtype
    }
    o[i] = from_acc<Out>(total);
  }
}

// The comparison type of max/min (int for bool: std::vector<bool> has no element
// references; float for bf16/f16).
template <typename T>
using extreme_cmp_t =
    std::conditional_t<is_half_v<T>, float, std::conditional_t<std::is_same_v<T, bool>, int, T>>;

// One reduced row (element i of every column) into the running extremes of the
// columns: replaces()'s rule written as selects, so that gcc vectorizes the loop
// across the columns (kIndex: with their indices).
template <bool kMax, bool kIndex, typename T, typename C>
void update_extremes(const T* __restrict row, C* __restrict best, int64_t* __restrict at, int64_t i, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    const C v = C(row[j]), b = best[j];
    bool r = kMax ? v > b : v < b;
    if constexpr (std::is_floating_point_v<C>) r = b == b && (r || v != v);
    best[j] = r ? v : b;
    if constexpr (kIndex) at[j] = r ? i : at[j];
  }
}

// The extremes of the columns of an outer-dim reduction whose kept dims are one
// dense run (amax or argmax over dim 0 of a matrix), each reduced row at a time
// (update_extremes); per column the same compares as the ordered loop. `at`
// (the indices) may be null.
// column_extremes' values when no element is a NaN: `v > b ? v : b` is one
// vmaxps (ties and +-0 keep b, the first), and one OR per element notes a NaN,
// against replaces()'s select of about 9 µops per 8 elements (amax over dim 0
// of 256 x 256 f32: 1.56x PyTorch's time). Returns false if some element is a
// NaN: then `best` is garbage and the caller runs the ordered rule.
template <bool kMax, typename T>
bool column_extremes_without_nan(const T* in, const ReducePlan& p, int64_t outputs, T* best) {
  // One reduced dim and an input in L2: the columns by pieces of kV vectors in
  // registers, down all the rows (as short_column_sums; the same compares, row by
  // row). A larger input streams faster row by row (1024 x 1024 f32: 62 us against 85).
  static constexpr int kW = int(32 / sizeof(T)), kV = 8;  // static: the lambda uses them uncaptured
  typedef T Vec __attribute__((vector_size(32)));
  const int64_t whole = one_dim_in_l2<T>(p, outputs) ? outputs - outputs % (kV * kW) : 0;
  std::copy_n(in + whole, outputs - whole, best + whole);
  int nan = 0;
  simd::run([&] {
    const int64_t n = whole > 0 ? p.red_sizes[0] : 0, stride = whole > 0 ? p.red_strides[0] : 0;
    for (int64_t c = 0; c < whole; c += kV * kW) {
      Vec b[kV];
      decltype(Vec{} != Vec{}) seen = {};  // all ones where a NaN was seen
#pragma GCC unroll 8
      for (int h = 0; h < kV; ++h) {
        std::memcpy(&b[h], in + c + h * kW, sizeof(Vec));
        seen |= b[h] != b[h];
      }
      for (int64_t k = 1; k < n; ++k) {
        const T* row = in + k * stride + c;
#pragma GCC unroll 8
        for (int h = 0; h < kV; ++h) {
          Vec v;
          std::memcpy(&v, row + h * kW, sizeof v);
          b[h] = (kMax ? v > b[h] : v < b[h]) ? v : b[h];
          seen |= v != v;
        }
      }
#pragma GCC unroll 8
      for (int h = 0; h < kV; ++h) std::memcpy(best + c + h * kW, &b[h], sizeof(Vec));
      for (int e = 0; e < kW; ++e) nan |= seen[e] != 0;
    }
    const int64_t m = outputs - whole;  // the columns row by row
    if (m == 0) return;
    for_each_offset(p.red_sizes, p.red_strides, 0, [&](int64_t rbase) {
      const T* __restrict row = in + rbase + whole;
      T* __restrict b = best + whole;
      int seen = 0;
      for (int64_t j = 0; j < m; ++j) {
        const T v = row[j];
        b[j] = (kMax ? v > b[j] : v < b[j]) ? v : b[j];
        seen |= v != v;
      }
      nan |= seen;
    });
  });
  return nan == 0;
}

template <bool kMax, typename T, typename C>
void column_extremes(const T* in, const ReducePlan& p, int64_t outputs, C* best, int64_t* at) {
  if constexpr (std::is_same_v<T, C> && std::is_floating_point_v<C>)
    if (at == nullptr && column_extremes_without_nan<kMax>(in, p, outputs, best)) return;
  for (int64_t j = 0; j < outputs; ++j) best[j] = C(in[j]);
  if (at != nullptr) std::fill_n(at, outputs, int64_t(0));
  int64_t i = 0;
  simd::run([&] {
    for_each_offset(p.red_sizes, p.red_strides, 0, [&](int64_t rbase) {
      if (at != nullptr) update_extremes<kMax, true>(in + rbase, best, at, i++, outputs);
      else update_extremes<kMax, false>(in + rbase, best, at, i++, outputs);
    });
  });
}

template <typename T, bool kMax>
void extreme_kernel(const Tensor& t, const ReducePlan& p, const Tensor& out) {
  const T* in = static_cast<const T*>(t.data_ptr());
  T* o = static_cast<T*>(out.data_ptr());
  using C = extreme_cmp_t<T>;
  if constexpr (std::is_floating_point_v<T>) {
    if (!kept_inner(p) && is_one_run(p.red_sizes, p.red_strides)) {
      simd::run([&] {  // every row in one AVX2 clone (simd.h)
        for_each_offset(p.kept_sizes, p.kept_strides, 0, [&](int64_t base) {
          *o++ = row_extreme_here<kMax>(in + base, p.red_count);
        });
      });
      return;
    }
  }
  if (kept_inner(p) && is_one_run(p.kept_sizes, p.kept_strides)) {
    if constexpr (std::is_same_v<T, C>) {  // straight into the result
      column_extremes<kMax>(in, p, out.numel(), o, nullptr);
      return;
    }
    std::vector<C> best(static_cast<size_t>(out.numel()));
    column_extremes<kMax>(in, p, out.numel(), best.data(), nullptr);
    for (size_t j = 0; j < best.size(); ++j) o[j] = T(best[j]);
    return;
  }
  // Start from each reduction's first element; visiting it again is harmless
  // (max(x, x) == x, NaN stays NaN).
  std::vector<C> best;
  best.reserve(size_t(out.numel()));
  for_each_offset(p.kept_sizes, p.kept_strides, 0, [&](int64_t off) { best.push_back(C(in[off])); });
  reduce_visit(p, best, [&](C& b, int64_t off) {
    const C v = C(in[off]);
    if (replaces<kMax>(v, b)) b = v;
  });
  for (size_t i = 0; i < best.size(); ++i) o[i] = T(best[i]);
}

// Each reduction's extreme and its index in row-major order of the reduced dims
// (vals may be null: argmax).
template <typename T, bool kMax>
void arg_extreme_kernel(const Tensor& t, const ReducePlan& p, T* vals, int64_t* idx) {
  using C = extreme_cmp_t<T>;
  const T* in = static_cast<const T*>(t.data_ptr());
  const int64_t outputs = std::accumulate(p.kept_sizes.begin(), p.kept_sizes.end(), int64_t(1), std::multiplies<>());
  if (kept_inner(p) && is_one_run(p.kept_sizes, p.kept_strides)) {  // argmax over dim 0
    std::vector<C> best(static_cast<size_t>(outputs));
    column_extremes<kMax>(in, p, outputs, best.data(), idx);
    if (vals != nullptr)
      for (int64_t j = 0; j < outputs; ++j) vals[j] = T(best[size_t(j)]);
    return;
  }
  if constexpr (std::is_floating_point_v<T>) {
    if (is_one_run(p.red_sizes, p.red_strides)) {  // argmax over the last dim: rows, vectorized
      int64_t o = 0;
      simd::run([&] {  // every row in one AVX2 clone (simd.h)
        for_each_offset(p.kept_sizes, p.kept_strides, 0, [&](int64_t base) {
          const T* x = in + base;
          int64_t at = 0;
          if (!lane_arg_extreme_here<kMax>(x, p.red_count, at))
            for (int64_t i = 1; i < p.red_count; ++i)
              if (replaces<kMax>(x[i], x[at])) at = i;
          if (vals != nullptr) vals[o] = x[at];
          idx[o++] = at;
        });
      });
      return;
    }
  }
  int64_t o = 0;
  for_each_offset(p.kept_sizes, p.kept_strides, 0, [&](int64_t base) {
    C best = C(in[base]);
    int64_t at = 0, i = 0;
    for_each_offset(p.red_sizes, p.red_strides, base, [&](int64_t off) {
      const C v = C(in[off]);
      if (replaces<kMax>(v, best)) best = v, at = i;
      ++i;
    });
    if (vals != nullptr) vals[o] = T(best);
    idx[o++] = at;
  });
}

template <bool kMax>
ValuesIndices run_arg_extreme(const char* op, const Tensor& t, const Shape& dims, bool keepdim,
                              bool want_values) {
  ReducePlan p = make_plan(op, t, dims, keepdim);
  if (dims.empty()) {
    SF_CHECK(t.numel() > 0, "{}: Expected reduction dim to be specified for input.numel() == 0.", op);
  } else {
    SF_CHECK(p.red_count > 0, "{}: Expected reduction dim {} to have non-zero size.", op,
             wrap_dim(dims[0], std::max<int64_t>(t.dim(), 1)));
  }
  if (t.is_meta())
    return {want_values ? Tensor::meta(p.out_sizes, t.dtype()) : Tensor(), Tensor::meta(p.out_sizes, DType::i64)};
  ValuesIndices r{want_values ? Tensor::empty(p.out_sizes, t.dtype()) : Tensor(),
                  Tensor::empty(p.out_sizes, DType::i64)};
  if (t.numel() == 0) return r;
  SF_DISPATCH(t.dtype(), {
    arg_extreme_kernel<T, kMax>(t, p, want_values ? static_cast<T*>(r.values.data_ptr()) : nullptr,
                                static_cast<int64_t*>(r.indices.data_ptr()));
  });
  return r;
}

Tensor run_argmax(const char* op, bool is_max, const Tensor& t, std::optional<int64_t> dim, bool keepdim) {
  SF_CHECK(t.dtype() != DType::boolean, "\"{}_cpu\" not implemented for 'Bool'", op);
  const Shape dims = dim ? Shape{*dim} : Shape{};
  return is_max ? run_arg_extreme<true>(op, t, dims, keepdim, false).indices
                : run_arg_extreme<false>(op, t, dims, keepdim, false).indices;
}

// var and mean of each reduction, in double: the mean first, then the squared
// deviations from it (two passes in a fixed order).
template <typename T>
void var_kernel(const Tensor& t, const ReducePlan& p, int64_t correction, bool take_sqrt, T* var, T* mean) {
  const T* in = static_cast<const T*>(t.data_ptr());
  const double n = double(p.red_count), dof = std::max(0.0, n - double(correction));
  int64_t o = 0;
  for_each_offset(p.kept_sizes, p.kept_strides, 0, [&](int64_t base) {
    double s = 0, m2 = 0;
    for_each_offset(p.red_sizes, p.red_strides, base, [&](int64_t off) { s += to_acc<double>(in[off]); });
    const double m = s / n;
    for_each_offset(p.red_sizes, p.red_strides, base, [&](int64_t off) {
      const double d = to_acc<double>(in[off]) - m;
      m2 += d * d;
    });
    const double v = m2 / dof;
    var[o] = from_acc<T>(take_sqrt ? std::sqrt(v) : v);
    if (mean != nullptr) mean[o] = from_acc<T>(m);
    ++o;
  });
}

std::pair<Tensor, Tensor> run_var(const char* op, const Tensor& t, const Shape& dims,
                                  std::optional<int64_t> correction, bool keepdim, bool take_sqrt,
                                  bool want_mean) {
  SF_CHECK(is_floating(t.dtype()), "{}: {} only support floating point and complex dtypes, got {}", op,
           want_mean ? op : "std and var", t.type_string());
  ReducePlan p = make_plan(op, t, dims, keepdim);
  const DType dt = t.dtype();
  if (t.is_meta()) return {Tensor::meta(p.out_sizes, dt), want_mean ? Tensor::meta(p.out_sizes, dt) : Tensor()};
  Tensor v = Tensor::empty(p.out_sizes, dt), m = want_mean ? Tensor::empty(p.out_sizes, dt) : Tensor();
  SF_DISPATCH(dt, {
    if constexpr (!std::is_integral_v<T>) {
      var_kernel<T>(t, p, correction.value_or(1), take_sqrt, static_cast<T*>(v.data_ptr()),
                    want_mean ? static_cast<T*>(m.data_ptr()) : nullptr);
    }
  });
  return {v, m};
}

// The p-norm of each reduction in A (float or double, as PyTorch), rounded to T.
template <typename T>
void norm_kernel(const Tensor& t, const ReducePlan& p, double ord, T* out) {
  using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const T* in = static_cast<const T*>(t.data_ptr());
  const bool extreme = std::isinf(ord);
  int64_t o = 0;
  for_each_offset(p.kept_sizes, p.kept_strides, 0, [&](int64_t base) {
    A acc = extreme ? std::fabs(A(to_acc<double>(in[base]))) : A(0);
    for_each_offset(p.red_sizes, p.red_strides, base, [&](int64_t off) {
      const A a = std::fabs(A(to_acc<double>(in[off])));
      if (extreme) {
        if (!std::isnan(acc) && (std::isnan(a) || (ord > 0 ? a > acc : a < acc))) acc = a;
      } else if (ord == 0) {
        acc += A(a != A(0));
      } else if (ord == 1) {
        acc += a;
      } else if (ord == 2) {
        acc += a * a;
      } else {
        acc += A(std::pow(a, A(ord)));
      }
    });
    if (!extreme && ord == 2) acc = std::sqrt(acc);
    else if (!extreme && ord != 0 && ord != 1) acc = A(std::pow(acc, A(1.0 / ord)));
    out[o++] = from_acc<T>(acc);
  });
}

// any (kAny) or all of each reduction, into bool.
template <typename T, bool kAny>
void any_all_kernel(const Tensor& t, const ReducePlan& p, bool* out) {
  const T* in = static_cast<const T*>(t.data_ptr());
  int64_t o = 0;
  for_each_offset(p.kept_sizes, p.kept_strides, 0, [&](int64_t base) {
    bool acc = !kAny;
    for_each_offset(p.red_sizes, p.red_strides, base, [&](int64_t off) {
      const bool nonzero = to_acc<double>(in[off]) != 0.0;  // NaN != 0
      acc = kAny ? (acc || nonzero) : (acc && nonzero);
    });
    out[o++] = acc;
  });
}

template <bool kAny>
Tensor run_any_all(const char* op, const Tensor& t, const Shape& dims, bool keepdim) {
  ReducePlan p = make_plan(op, t, dims, keepdim);
  if (t.is_meta()) return Tensor::meta(p.out_sizes, DType::boolean);
  Tensor out = Tensor::empty(p.out_sizes, DType::boolean);
  if (out.numel() == 0) return out;
  SF_DISPATCH(t.dtype(), { any_all_kernel<T, kAny>(t, p, static_cast<bool*>(out.data_ptr())); });
  return out;
}

// sum's and cumsum's output dtype: the one asked for, else floating stays and
// integers and bool become i64.
DType sum_dtype(DType in, std::optional<DType> dtype) {
  if (dtype) return *dtype;
  return is_floating(in) ? in : DType::i64;
}

Tensor run_sum(const char* op, const Tensor& t, const Shape& dims, bool keepdim,
               std::optional<DType> dtype, bool is_mean) {
  const DType in_dt = t.dtype();
  const DType out_dt = sum_dtype(in_dt, dtype);
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

ValuesIndices max_dim(const Tensor& t, int64_t dim, bool keepdim) {
  return run_arg_extreme<true>("max", t, {dim}, keepdim, true);
}
ValuesIndices min_dim(const Tensor& t, int64_t dim, bool keepdim) {
  return run_arg_extreme<false>("min", t, {dim}, keepdim, true);
}
Tensor argmax(const Tensor& t, std::optional<int64_t> dim, bool keepdim) {
  return run_argmax("argmax", true, t, dim, keepdim);
}
Tensor argmin(const Tensor& t, std::optional<int64_t> dim, bool keepdim) {
  return run_argmax("argmin", false, t, dim, keepdim);
}

Tensor var(const Tensor& t, const Shape& dims, std::optional<int64_t> correction, bool keepdim) {
  return run_var("var", t, dims, correction, keepdim, false, false).first;
}
Tensor std_dev(const Tensor& t, const Shape& dims, std::optional<int64_t> correction, bool keepdim) {
  return run_var("std", t, dims, correction, keepdim, true, false).first;
}
std::pair<Tensor, Tensor> var_mean(const Tensor& t, const Shape& dims, std::optional<int64_t> correction,
                                   bool keepdim) {
  return run_var("var_mean", t, dims, correction, keepdim, false, true);
}
std::pair<Tensor, Tensor> std_mean(const Tensor& t, const Shape& dims, std::optional<int64_t> correction,
                                   bool keepdim) {
  return run_var("std_mean", t, dims, correction, keepdim, true, true);
}

Tensor cumsum(const Tensor& t, int64_t dim, std::optional<DType> dtype) {
  const int64_t d = wrap_dim(dim, std::max<int64_t>(t.dim(), 1));
  const DType out_dt = sum_dtype(t.dtype(), dtype);
  Tensor out = to_dtype(t, out_dt);  // contiguous, converted: the scan runs in place on it
  if (out.is_meta() || out.numel() == 0) return out;
  const Shape& s = t.sizes();
  int64_t outer = 1, n = t.dim() == 0 ? 1 : s[size_t(d)], inner = 1;
  for (int64_t k = 0; k < t.dim(); ++k) (k < d ? outer : inner) *= k == d ? 1 : s[size_t(k)];
  SF_DISPATCH(out_dt, {
    T* p = static_cast<T*>(out.data_ptr());
    using Acc = std::conditional_t<std::is_integral_v<T>, int64_t, double>;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        T* col = p + o * n * inner + i;
        Acc acc = 0;
        for (int64_t j = 0; j < n; ++j) {
          acc += to_acc<Acc>(col[j * inner]);
          col[j * inner] = from_acc<T>(acc);
        }
      }
  });
  return out;
}

Tensor norm(const Tensor& t, std::optional<double> p, const Shape& dims, bool keepdim) {
  SF_CHECK(is_floating(t.dtype()), "norm: input dtype should be either floating point or complex. Got {} instead.",
           dtype_name(t.dtype()));
  const double ord = p.value_or(2.0);
  ReducePlan plan = make_plan("norm", t, dims, keepdim);
  SF_CHECK(!std::isinf(ord) || plan.red_count > 0,
           "norm: cannot compute the {} norm on an empty tensor because the operation does not have an identity",
           ord > 0 ? "inf" : "-inf");
  if (t.is_meta()) return Tensor::meta(plan.out_sizes, t.dtype());
  Tensor out = Tensor::empty(plan.out_sizes, t.dtype());
  if (out.numel() == 0) return out;
  SF_DISPATCH(t.dtype(), {
    if constexpr (!std::is_integral_v<T>) norm_kernel<T>(t, plan, ord, static_cast<T*>(out.data_ptr()));
  });
  return out;
}

Tensor any(const Tensor& t, const Shape& dims, bool keepdim) { return run_any_all<true>("any", t, dims, keepdim); }
Tensor all(const Tensor& t, const Shape& dims, bool keepdim) { return run_any_all<false>("all", t, dims, keepdim); }

ValuesIndices topk(const Tensor& t, int64_t k, int64_t dim, bool largest) {
  const int64_t nd = std::max<int64_t>(t.dim(), 1), d = wrap_dim(dim, nd);
  const int64_t n = t.dim() == 0 ? 1 : t.size(d);
  SF_CHECK(k >= 0 && k <= n, "topk: selected index k out of range (k = {}, size {})", k, n);
  SF_CHECK(t.dtype() != DType::boolean, "topk: \"topk_cpu\" not implemented for 'Bool'");
  Shape shape = t.sizes();
  if (t.dim() > 0) shape[size_t(d)] = k;
  if (t.is_meta()) return {Tensor::meta(shape, t.dtype()), Tensor::meta(shape, DType::i64)};
  // Rows along the last dim of a contiguous copy with `dim` moved last.
  const Tensor x = contiguous(t.dim() == 0 ? t : transpose(t, d, -1));
  Shape moved = x.sizes();
  if (!moved.empty()) moved.back() = k;
  Tensor vals = Tensor::empty(moved, t.dtype()), idx = Tensor::empty(moved, DType::i64);
  const int64_t rows = n == 0 ? 0 : x.numel() / n;
  SF_DISPATCH(t.dtype(), {
    using C = extreme_cmp_t<T>;
    const T* in = static_cast<const T*>(x.data_ptr());
    T* ov = static_cast<T*>(vals.data_ptr());
    int64_t* oi = idx.data<int64_t>();
    std::vector<int64_t> order(static_cast<size_t>(n));
    for (int64_t r = 0; r < rows; ++r) {
      const T* row = in + r * n;
      for (int64_t i = 0; i < n; ++i) order[size_t(i)] = i;
      // a before b: a is further towards the chosen end (NaN largest), ties by index.
      auto before = [&](int64_t a, int64_t b) {
        const C va = C(row[a]), vb = C(row[b]);
        if (replaces<true>(va, vb) != replaces<true>(vb, va))
          return largest ? replaces<true>(va, vb) : replaces<true>(vb, va);
        return a < b;
      };
      std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
      for (int64_t j = 0; j < k; ++j) {
        ov[r * k + j] = row[order[size_t(j)]];
        oi[r * k + j] = order[size_t(j)];
      }
    }
  });
  if (t.dim() == 0) return {vals, idx};
  return {contiguous(transpose(vals, d, -1)), contiguous(transpose(idx, d, -1))};
}

}  // namespace symmflow::kernels
