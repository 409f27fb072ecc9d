// Internal machinery of the pointwise kernels (pointwise.h): dtype dispatch, the
// elementwise loop over N strided inputs, and the functional / in-place / out=
// plumbing. Only unary.cc, binary.cc, compare.cc and ops/fused_block.cc (the fused
// chains' raw loops, which must be eager's) include it.
#pragma once
#include <algorithm>
#include <array>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "symmflow/core/overlap.h"
#include "symmflow/kernels/copy.h"
#include "symmflow/kernels/loops.h"
#include "symmflow/kernels/pointwise_functors.h"
#include "symmflow/kernels/simd.h"
#include "symmflow/kernels/type_promotion.h"

namespace symmflow::kernels::pointwise_detail {

// ---- dtype sets and dispatch ----------------------------------------------------
inline constexpr unsigned kFloats = 1, kInts = 2, kBool = 4;
inline constexpr unsigned kIntsAndFloats = kFloats | kInts, kAllTypes = kFloats | kInts | kBool;

template <typename T> struct Tag { using type = T; };

// Calls body(Tag<T>{}) with T the element type of `d`; dtypes outside Set are an
// Error (and their code is never instantiated).
template <unsigned Set, typename Body>
void dispatch(std::string_view op, DType d, Body&& body) {
  switch (d) {
    case DType::f32: if constexpr ((Set & kFloats) != 0) return body(Tag<float>{}); break;
    case DType::f64: if constexpr ((Set & kFloats) != 0) return body(Tag<double>{}); break;
    case DType::bf16: if constexpr ((Set & kFloats) != 0) return body(Tag<BFloat16>{}); break;
    case DType::f16: if constexpr ((Set & kFloats) != 0) return body(Tag<Half>{}); break;
    case DType::i32: if constexpr ((Set & kInts) != 0) return body(Tag<int32_t>{}); break;
    case DType::i64: if constexpr ((Set & kInts) != 0) return body(Tag<int64_t>{}); break;
    case DType::boolean: if constexpr ((Set & kBool) != 0) return body(Tag<bool>{}); break;
  }
  fail("{}: not implemented for dtype {}", op, dtype_name(d));
}

template <typename T>
inline constexpr bool is_reduced_float_v = std::is_same_v<T, BFloat16> || std::is_same_v<T, Half>;

// ---- the elementwise loop -------------------------------------------------------

// One input of a dense run: contiguous (element i) or broadcast (one value).
template <typename T> struct DenseIn {
  const T* p;
  compute_t<T> operator[](int64_t i) const { return to_compute(p[i]); }
};
template <typename T> struct BcastIn {
  compute_t<T> v;
  compute_t<T> operator[](int64_t) const { return v; }
};

// out[i] = f(in[i]...) for i < n. Fixed-size blocks with `ivdep` let gcc vectorize at
// -O2: the output may be one of the inputs (in place), never a shifted copy of one
// (prepare_input copies those), so there is no loop-carried dependence. run_dense
// runs it in AVX2 where the CPU has it (simd.h; the same bits).
template <typename Out, typename F, typename... R>
inline void run_dense_loop(Out* o, int64_t n, const F& f_ref, R... r) {
  // A local copy: a value the function captured (add's alpha) would otherwise be
  // read through a pointer that the float stores may alias, and reloaded after
  // each one, which keeps gcc from vectorizing.
  const F f = f_ref;
  constexpr int64_t kBlock = 16;
  const int64_t m = n - n % kBlock;
  for (int64_t j = 0; j < m; j += kBlock) {
#pragma GCC ivdep
    for (int64_t i = j; i < j + kBlock; ++i) o[i] = from_compute<Out>(f(r[i]...));
  }
  for (int64_t i = m; i < n; ++i) o[i] = from_compute<Out>(f(r[i]...));
}

template <typename Out, typename F, typename... R>
inline void run_dense(Out* o, int64_t n, const F& f, R... r) {
  simd::run([&] { run_dense_loop(o, n, f, r...); });
}

template <typename T> inline compute_t<T> load(const char* p) {
  return to_compute(*reinterpret_cast<const T*>(p));
}

// The elements of t's block when t, broadcast to `shape`, is a contiguous block
// repeated over the leading dims (a bias row: [C] or [1, C] against [R, C]), of
// at least 16 elements (shorter rows are cheaper in the strided loop); else 0.
inline int64_t repeated_block(const Tensor& t, const Shape& shape) {
  const Shape& s = t.sizes();
  size_t lead = 0;  // t's leading size-1 dims
  while (lead < s.size() && s[lead] == 1) ++lead;
  const size_t k = s.size() - lead;
  if (!t.is_contiguous() || k == 0 || k >= shape.size() || t.numel() < 16) return 0;
  for (size_t d = 0; d < k; ++d)
    if (s[lead + d] != shape[shape.size() - k + d]) return 0;
  return t.numel();
}

// The elements of each run of dst over which t, broadcast to `shape`, holds one
// value, when those runs are whole trailing dims and t's values follow them in
// order (a per-row statistic: [R, 1] against [R, C], as RMSNorm's x * rsqrt(...)
// and softmax's x - max): t contiguous, its trailing dims 1 where shape's are not,
// its other dims shape's (leading ones may be missing: it then repeats). Runs of
// at least 16 elements (shorter ones are cheaper in the strided loop); else 0.
inline int64_t repeated_value(const Tensor& t, const Shape& shape) {
  const Shape& s = t.sizes();
  if (!t.is_contiguous() || s.empty() || s.size() > shape.size() || s.back() != 1) return 0;
  const size_t off = shape.size() - s.size();
  int64_t run = 1;
  size_t d = s.size();
  for (; d > 0 && s[d - 1] == 1; --d) run *= shape[off + d - 1];
  for (size_t k = 0; k < d; ++k)
    if (s[k] != shape[off + k]) return 0;
  return run >= 16 ? run : 0;
}

template <typename Out, typename... In, typename F, size_t... I>
void elementwise_impl(const Tensor& dst, const std::array<Tensor, sizeof...(In)>& ins,
                      const F& f, std::index_sequence<I...>) {
  constexpr size_t N = sizeof...(In) + 1;
  const Shape& shape = dst.sizes();
  // Every operand contiguous with dst's shape (the common eager case), or every
  // operand in dst's permuted dense layout (exp(x.t()): a fresh result takes
  // x.t()'s strides): one dense run in memory order, without building the strided
  // loop (its stride vectors and coalescing cost more than a small op's
  // arithmetic). The same loop as the run below.
  const bool one_run =
      dst.is_contiguous()
          ? ((ins[I].is_contiguous() && ins[I].sizes() == shape) && ...)
          : ((ins[I].sizes() == shape && ins[I].strides() == dst.strides()) && ...) && is_non_overlapping_and_dense(dst);
  if (one_run) {
    return run_dense(static_cast<Out*>(dst.data_ptr()), dst.numel(),
                     f, DenseIn<In>{static_cast<const In*>(ins[I].data_ptr())}...);
  }
  if constexpr (N == 3) {
    // One operand in dst's layout, the other dense in another (x.t() + y: the
    // result takes x.t()'s layout, so y is read across): the other copied into
    // dst's layout by the tiled transposing copy (copy.h), then the one dense
    // run above. The same bits: an element's result depends on its operands'
    // values only. Walked in for_each_run_tiled's 8 x 8 tiles instead, each run
    // of 8 took the scalar loop: add 64K transposed read 0.87-1.42x PyTorch's time.
    const auto& ds = dst.strides();
    if (dst.numel() > 1 && is_non_overlapping_and_dense(dst) &&
        std::all_of(ds.begin(), ds.end(), [](int64_t v) { return v >= 0; })) {
      auto in_dst_layout = [&](const Tensor& t) { return t.sizes() == shape && t.strides() == ds; };
      for (size_t k = 0; k < 2; ++k) {
        const Tensor& other = ins[k];
        if (!in_dst_layout(ins[1 - k]) || in_dst_layout(other) || other.sizes() != shape ||
            !is_non_overlapping_and_dense(other))
          continue;
        std::array<Tensor, 2> again = ins;
        again[k] = Tensor::empty({dst.numel()}, other.dtype()).as_strided(shape, ds, 0);
        copy_(again[k], other);
        return elementwise_impl<Out, In...>(dst, again, f, std::index_sequence<I...>{});
      }
    }
  }
  if constexpr (N == 3) {  // binary ops: x + row, a contiguous operand and one repeated whole
    using A = std::tuple_element_t<0, std::tuple<In...>>;
    using B = std::tuple_element_t<1, std::tuple<In...>>;
    if (dst.is_contiguous() && dst.numel() > 0) {
      Out* o = static_cast<Out*>(dst.data_ptr());
      const int64_t n = dst.numel();
      // Which operand is a whole contiguous block of dst's shape (the other one repeats).
      const bool a_whole = ins[0].is_contiguous() && ins[0].sizes() == shape;
      const bool b_whole = ins[1].is_contiguous() && ins[1].sizes() == shape;
      if (a_whole) {
        if (const int64_t inner = repeated_block(ins[1], shape); inner > 0) {
          const A* a = static_cast<const A*>(ins[0].data_ptr());
          const DenseIn<B> b{static_cast<const B*>(ins[1].data_ptr())};
          return simd::run([&] {
            for (int64_t i = 0; i < n; i += inner) run_dense_loop(o + i, inner, f, DenseIn<A>{a + i}, b);
          });
        }
      }
      if (b_whole) {
        if (const int64_t inner = repeated_block(ins[0], shape); inner > 0) {
          const DenseIn<A> a{static_cast<const A*>(ins[0].data_ptr())};
          const B* b = static_cast<const B*>(ins[1].data_ptr());
          return simd::run([&] {
            for (int64_t i = 0; i < n; i += inner) run_dense_loop(o + i, inner, f, a, DenseIn<B>{b + i});
          });
        }
      }
      // x op column: one value of the other operand per run of `run` elements.
      if (a_whole) {
        if (const int64_t run = repeated_value(ins[1], shape); run > 0) {
          const A* a = static_cast<const A*>(ins[0].data_ptr());
          const B* b = static_cast<const B*>(ins[1].data_ptr());
          const int64_t m = ins[1].numel();
          return simd::run([&] {
            for (int64_t i = 0, r = 0; i < n; i += run, r = r + 1 == m ? 0 : r + 1)
              run_dense_loop(o + i, run, f, DenseIn<A>{a + i}, BcastIn<B>{to_compute(b[r])});
          });
        }
      }
      if (b_whole) {
        if (const int64_t run = repeated_value(ins[0], shape); run > 0) {
          const A* a = static_cast<const A*>(ins[0].data_ptr());
          const B* b = static_cast<const B*>(ins[1].data_ptr());
          const int64_t m = ins[0].numel();
          return simd::run([&] {
            for (int64_t i = 0, r = 0; i < n; i += run, r = r + 1 == m ? 0 : r + 1)
              run_dense_loop(o + i, run, f, BcastIn<A>{to_compute(a[r])}, DenseIn<B>{b + i});
          });
        }
      }
    }
  }
  std::array<char*, N> base{static_cast<char*>(dst.data_ptr()),
                            static_cast<char*>(ins[I].data_ptr())...};
  std::array<std::vector<int64_t>, N> st{byte_strides(dst), broadcast_byte_strides(ins[I], shape)...};
  for_each_run_tiled<N>(shape, base, st, [&](char** p, const int64_t* s, int64_t n) {
    if (s[0] == int64_t(sizeof(Out))) {
      Out* o = reinterpret_cast<Out*>(p[0]);
      if (((s[I + 1] == int64_t(sizeof(In))) && ...)) {
        return run_dense(o, n, f, DenseIn<In>{reinterpret_cast<const In*>(p[I + 1])}...);
      }
      if constexpr (N == 3) {  // binary ops: one side broadcast along the run
        using A = std::tuple_element_t<0, std::tuple<In...>>;
        using B = std::tuple_element_t<1, std::tuple<In...>>;
        if (s[1] == 0 && s[2] == int64_t(sizeof(B)))
          return run_dense(o, n, f, BcastIn<A>{load<A>(p[1])}, DenseIn<B>{reinterpret_cast<const B*>(p[2])});
        if (s[1] == int64_t(sizeof(A)) && s[2] == 0)
          return run_dense(o, n, f, DenseIn<A>{reinterpret_cast<const A*>(p[1])}, BcastIn<B>{load<B>(p[2])});
      }
    }
    for (int64_t i = 0; i < n; ++i)
      *reinterpret_cast<Out*>(p[0] + i * s[0]) = from_compute<Out>(f(load<In>(p[I + 1] + i * s[I + 1])...));
  });
}

// dst[idx] = f(ins[idx]...) over dst's shape; inputs broadcast to it, have element
// types In... and must not overlap dst except in exactly dst's layout.
template <typename Out, typename... In, typename F>
void elementwise(const Tensor& dst, const std::array<Tensor, sizeof...(In)>& ins, const F& f) {
  elementwise_impl<Out, In...>(dst, ins, f, std::index_sequence_for<In...>{});
}

// ---- operands, destinations -----------------------------------------------------

// `t` as a loop input for dst: converted to `dtype`, and copied when it may share
// memory with dst in a different layout. (A partial overlap of two dense views is
// an error before this, in prepare_dest, as in PyTorch; what is left are layouts
// PyTorch does not decide, e.g. x[:, 0:2] += x[:, 1:3], which read the old values.)
Tensor prepare_input(const Tensor& t, DType dtype, const Tensor& dst);
// A one-element tensor of dtype `dtype` holding `s` (where/pow with Scalar operands).
Tensor scalar_tensor(const Scalar& s, DType dtype);
// The broadcast shape of the tensor operands (Scalars have shape []).
Shape broadcast_operands(std::initializer_list<Operand> ops);
bool any_meta_operand(std::initializer_list<Operand> ops);
// For out= and in-place, PyTorch's checks: dst has no two elements at one address
// (a stride-0 dim), no tensor of `inputs` partially overlaps dst (overlap.h; the
// same geometry is fine), the result type casts to dst's dtype, and the shape
// (an empty out is resized).
void prepare_dest(std::string_view op, const Tensor& dst, bool inplace, const Shape& shape,
                  DType result, std::initializer_list<Operand> inputs);
// An out= of another shape is an error unless it is empty: then it is resized
// (a fresh contiguous storage; a meta out gets the new type only).
void resize_out(std::string_view op, const Tensor& out, const Shape& shape);

// A fresh result of `shape` computed from `inputs` (in the op's argument order;
// a Scalar is PyTorch's wrapped number): in the layout PyTorch gives it
// (core/layout.h), so exp(x.t()) is x.t()'s layout and its loop one dense run.
// A meta tensor of that type when `meta`.
Tensor fresh_result(const Shape& shape, DType dtype, bool meta, std::initializer_list<Operand> inputs);

// Where the result goes: a fresh tensor (out == nullptr), self (in place) or out.
struct Dest {
  const Tensor* out = nullptr;
  bool inplace = false;
  static Dest fresh() { return {}; }
  static Dest in_place(const Tensor& self) { return {&self, true}; }
  static Dest into(const Tensor& out) { return {&out, false}; }
};

// Resolves the destination for a result of `shape`/`result` computed from `inputs`
// and runs fill(dst) with a dst of exactly that dtype and shape (a temporary when
// out's dtype differs).
template <typename Fill>
Tensor finish(std::string_view op, Dest dest, const Shape& shape, DType result, bool meta,
              std::initializer_list<Operand> inputs, Fill&& fill) {
  if (dest.out == nullptr) {
    Tensor dst = fresh_result(shape, result, meta, inputs);
    if (!meta) fill(dst);
    return dst;
  }
  const Tensor& o = *dest.out;
  prepare_dest(op, o, dest.inplace, shape, result, inputs);
  if (meta || o.is_meta()) return o;
  if (o.dtype() == result) {
    fill(o);
  } else {
    Tensor tmp = Tensor::empty(shape, result);
    fill(tmp);
    copy_(o, tmp);
  }
  return o;
}

// The value of a Scalar operand in compute type: converted to T first (PyTorch casts
// wrapped numbers to the common dtype), unless `opmath` (mul/div keep a Scalar in
// float for bf16/f16, as PyTorch's CPU kernels do).
template <typename T>
compute_t<T> scalar_value(const Scalar& s, bool opmath = false) {
  if constexpr (is_reduced_float_v<T>) {
    if (opmath) return float(s.to_double());
  }
  return to_compute(s.to<T>());
}

// ---- binary ops -----------------------------------------------------------------
struct BinaryInfo {
  std::string_view name;
  bool int_to_float = false;   // true division: integer/bool inputs compute in f32
  bool opmath_scalar = false;  // mul/div: see scalar_value
  bool int_div = false;        // integer division: a zero divisor is an Error
};

template <typename T> void check_nonzero(std::string_view op, const Tensor& t) {
  bool zero = false;
  std::array<char*, 1> base{static_cast<char*>(t.data_ptr())};
  for_each_run<1>(t.sizes(), base, {byte_strides(t)}, [&](char** p, const int64_t* s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) zero |= *reinterpret_cast<const T*>(p[0] + i * s[0]) == T(0);
  });
  SF_CHECK(!zero, "{}: integer division by zero (ZeroDivisionError)", op);
}

// Runs a binary op. make(Tag<T>{}) returns the element function on compute_t<T>
// (T = the common dtype); its result type decides the output: bool for comparisons,
// else the common dtype.
template <unsigned Set, typename Make>
Tensor binary(const BinaryInfo& info, Dest dest, Operand a, Operand b, Make&& make) {
  DType common = result_type({a, b});
  if (info.int_to_float) common = to_floating(common);
  // Probe the element function's result type to know the output dtype.
  DType result = common;
  dispatch<Set>(info.name, common, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    using R = decltype(make(tag)(C{}, C{}));
    if constexpr (std::is_same_v<R, bool> && !std::is_same_v<C, bool>) result = DType::boolean;
  });
  const Shape shape = broadcast_operands({a, b});
  const bool meta = any_meta_operand({a, b});
  return finish(info.name, dest, shape, result, meta, {a, b}, [&](const Tensor& dst) {
    dispatch<Set>(info.name, common, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = compute_t<T>;
      using Out = std::conditional_t<std::is_same_v<decltype(make(tag)(C{}, C{})), C>, T, bool>;
      const auto f = make(tag);
      // A one-element second tensor of mul/div in bf16/f16 is read in float (PyTorch).
      if constexpr (is_reduced_float_v<T>) {
        if (info.opmath_scalar && a.is_tensor() && b.is_tensor() && b.tensor->numel() == 1) {
          const C bv = C(b.tensor->item());
          const auto g = [f, bv](C x) { return f(x, bv); };
          return elementwise<Out, T>(dst, {prepare_input(*a.tensor, common, dst)}, g);
        }
      }
      if (a.is_tensor() && b.is_tensor()) {
        Tensor ta = prepare_input(*a.tensor, common, dst);
        Tensor tb = prepare_input(*b.tensor, common, dst);
        if constexpr (std::is_integral_v<T>) {
          if (info.int_div) check_nonzero<T>(info.name, tb);
        }
        return elementwise<Out, T, T>(dst, {ta, tb}, f);
      }
      if (a.is_tensor()) {
        const C bv = scalar_value<T>(*b.scalar, info.opmath_scalar);
        if constexpr (std::is_integral_v<T>) {
          SF_CHECK(!(info.int_div && bv == C(0)), "{}: integer division by zero (ZeroDivisionError)",
                   info.name);
        }
        const auto g = [f, bv](C x) { return f(x, bv); };
        return elementwise<Out, T>(dst, {prepare_input(*a.tensor, common, dst)}, g);
      }
      SF_CHECK(b.is_tensor(), "{}: expected at least one tensor operand", info.name);
      const C av = scalar_value<T>(*a.scalar);
      Tensor tb = prepare_input(*b.tensor, common, dst);
      if constexpr (std::is_integral_v<T>) {
        if (info.int_div) check_nonzero<T>(info.name, tb);
      }
      const auto g = [f, av](C y) { return f(av, y); };
      return elementwise<Out, T>(dst, {tb}, g);
    });
  });
}

// ---- unary ops ------------------------------------------------------------------
// make(Tag<T>{}) returns the element function on compute_t<T>. same_dtype_out: an
// out= must have exactly the result dtype, no cast (PyTorch builds neg, abs and gelu
// without type promotion: "Found dtype Double but expected Float").
// run(Tag<T>{}, dst, in) fills dst (dtype T) from in (x converted to T).
template <unsigned Set, typename Run>
Tensor unary_with(std::string_view name, bool int_to_float, Dest dest, const Tensor& x, Run&& run,
                  bool same_dtype_out) {
  const DType common = int_to_float ? to_floating(x.dtype()) : x.dtype();
  // Check the dtype before any meta shortcut, so the Meta kernel rejects it too.
  dispatch<Set>(name, common, [](auto) {});
  if (same_dtype_out && dest.out != nullptr && !dest.inplace)
    SF_CHECK(dest.out->dtype() == common, "{}: Found dtype {} but expected {}", name,
             dtype_name(dest.out->dtype()), dtype_name(common));
  return finish(name, dest, x.sizes(), common, x.is_meta(), {x}, [&](const Tensor& dst) {
    dispatch<Set>(name, common, [&](auto tag) { run(tag, dst, prepare_input(x, common, dst)); });
  });
}

template <unsigned Set, typename Make>
Tensor unary(std::string_view name, bool int_to_float, Dest dest, const Tensor& x, Make&& make,
             bool same_dtype_out = false) {
  return unary_with<Set>(name, int_to_float, dest, x, [&](auto tag, const Tensor& dst, const Tensor& in) {
    using T = typename decltype(tag)::type;
    elementwise<T, T>(dst, {in}, make(tag));
  }, same_dtype_out);
}

// dst = fn(in) for a floating T through vec::map (vec_math.h): a run contiguous in
// both goes straight to it; any other run (strided, bf16/f16) is gathered into a
// compute-type block, mapped and scattered, so every element is computed by the
// same vector function.
template <typename T>
void map_runs(vec::Fn fn, const Tensor& dst, const Tensor& in) {
  using C = compute_t<T>;
  if constexpr (std::is_same_v<T, C>) {
    // A permuted dense input (x.t()) for a row-major dst (an out= or in-place one:
    // a fresh result takes the input's layout, core/layout.h): its memory mapped
    // in memory order into a temporary of its layout, then one tiled transposing
    // copy (loops.h), instead of gathering a few elements per vector call. The
    // same bits: an element's result depends on its value only.
    const auto& st = in.strides();
    if (dst.is_contiguous() && !in.is_contiguous() && in.sizes() == dst.sizes() &&
        std::all_of(st.begin(), st.end(), [](int64_t v) { return v >= 0; }) && is_non_overlapping_and_dense(in)) {
      Tensor tmp = Tensor::empty({in.numel()}, in.dtype());
      vec::map(fn, static_cast<const T*>(in.data_ptr()), static_cast<T*>(tmp.data_ptr()), in.numel());
      copy_(dst, tmp.as_strided(in.sizes(), in.strides(), 0));
      return;
    }
  }
  std::array<char*, 2> base{static_cast<char*>(dst.data_ptr()), static_cast<char*>(in.data_ptr())};
  for_each_run_tiled<2>(dst.sizes(), base, {byte_strides(dst), broadcast_byte_strides(in, dst.sizes())},
                  [&](char** p, const int64_t* s, int64_t n) {
    if constexpr (std::is_same_v<T, C>) {
      if (s[0] == int64_t(sizeof(T)) && s[1] == int64_t(sizeof(T)))
        return vec::map(fn, reinterpret_cast<const T*>(p[1]), reinterpret_cast<T*>(p[0]), n);
    }
    constexpr int64_t kBlock = 256;
    C buf[kBlock];
    for (int64_t j = 0; j < n; j += kBlock) {
      const int64_t m = std::min(kBlock, n - j);
      for (int64_t i = 0; i < m; ++i) buf[i] = load<T>(p[1] + (j + i) * s[1]);
      vec::map(fn, buf, buf, m);
      for (int64_t i = 0; i < m; ++i) *reinterpret_cast<T*>(p[0] + (j + i) * s[0]) = from_compute<T>(buf[i]);
    }
  });
}

// A unary op whose functor F runs on SLEEF (F::kVec): floating dtypes only.
template <typename F>
Tensor unary_vec(std::string_view name, bool int_to_float, Dest dest, const Tensor& x,
                 bool same_dtype_out = false) {
  return unary_with<kFloats>(name, int_to_float, dest, x, [](auto tag, const Tensor& dst, const Tensor& in) {
    map_runs<typename decltype(tag)::type>(F::kVec, dst, in);
  }, same_dtype_out);
}

}  // namespace symmflow::kernels::pointwise_detail
