#include "symmflow/runtime/collectives/reduce_kernels.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "symmflow/core/error.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

// Why O3: the folds below are plain loops over a stack block and read-only
// inputs, which GCC vectorizes at O3 (its O2 cost model refuses most of them).
// -ffp-contract=off still holds (there is no multiply-add here anyway), and
// nothing reassociates: every element is folded in rank order.
#pragma GCC optimize("O3")

namespace symmflow::dist::detail {
namespace {

// Storage type -> accumulation type, load (widen) and store (round once).
template <class T>
struct Traits {
  using Acc = T;
  static Acc load(T v) { return v; }
  static T store(Acc a) { return a; }
};
template <>
struct Traits<BFloat16> {
  using Acc = float;
  static float load(BFloat16 v) {
    uint32_t u = uint32_t(v.bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  static BFloat16 store(float a) {
    BFloat16 b;
    b.bits = BFloat16::from_float(a);
    return b;
  }
};
template <>
struct Traits<Half> {
  using Acc = float;
  static float load(Half v) { return Half::to_float(v.bits); }
  static Half store(float a) {
    Half h;
    h.bits = Half::from_float(a);
    return h;
  }
};

template <class A>
constexpr bool kFloat = std::is_floating_point_v<A>;

// Integer arithmetic wraps (two's complement) instead of being undefined.
template <class A>
A wrap_add(A a, A b) {
  using U = std::make_unsigned_t<A>;
  return A(U(a) + U(b));
}
template <class A>
A wrap_mul(A a, A b) {
  using U = std::make_unsigned_t<A>;
  return A(U(a) * U(b));
}

struct Sum {
  template <class A>
  static A f(A a, A b) {
    if constexpr (kFloat<A>) return a + b;
    else return wrap_add(a, b);
  }
};
struct Prod {
  template <class A>
  static A f(A a, A b) {
    if constexpr (kFloat<A>) return a * b;
    else return wrap_mul(a, b);
  }
};
// NaN wins (torch.maximum/minimum); otherwise ties keep b, deterministically.
struct Max {
  template <class A>
  static A f(A a, A b) {
    if constexpr (kFloat<A>) return (a > b || a != a) ? a : b;
    else return a > b ? a : b;
  }
};
struct Min {
  template <class A>
  static A f(A a, A b) {
    if constexpr (kFloat<A>) return (a < b || a != a) ? a : b;
    else return a < b ? a : b;
  }
};
struct Or {
  static bool f(bool a, bool b) { return a | b; }
};
struct And {
  static bool f(bool a, bool b) { return a & b; }
};

// Folds in blocks: the accumulator lives on the stack, so no loop here can alias
// dst (which may equal an input), and each loop is a clean vectorizable stream.
template <class T, class Op, bool kAvg>
[[gnu::always_inline]] inline void fold(int w, const void* const* srcs, void* dstv, size_t n) {
  using Tr = Traits<T>;
  using A = typename Tr::Acc;
  constexpr size_t kBlock = 4096 / sizeof(A);
  alignas(64) A acc[kBlock];
  T* dst = static_cast<T*>(dstv);
  const T* s0 = static_cast<const T*>(srcs[0]);
  const T* s1 = w > 1 ? static_cast<const T*>(srcs[1]) : nullptr;
  for (size_t b = 0; b < n; b += kBlock) {
    const size_t m = std::min(kBlock, n - b);
    if (s1) {
      const T* x = s0 + b;
      const T* y = s1 + b;
      for (size_t k = 0; k < m; ++k) acc[k] = Op::f(Tr::load(x[k]), Tr::load(y[k]));
    } else {
      const T* x = s0 + b;
      for (size_t k = 0; k < m; ++k) acc[k] = Tr::load(x[k]);
    }
    for (int j = 2; j < w; ++j) {
      const T* x = static_cast<const T*>(srcs[j]) + b;
      for (size_t k = 0; k < m; ++k) acc[k] = Op::f(acc[k], Tr::load(x[k]));
    }
    T* out = dst + b;
    if constexpr (kAvg) {
      const A div = A(w);
      for (size_t k = 0; k < m; ++k) out[k] = Tr::store(acc[k] / div);
    } else {
      for (size_t k = 0; k < m; ++k) out[k] = Tr::store(acc[k]);
    }
  }
}

// fold_link's loop: the same element order and arithmetic as fold().
template <class T, class Op, bool kAvg>
void fold_link_t(const void* acc_in, int w, const void* const* srcs, void* acc_out, void* outv,
                 int world, size_t n) {
  using Tr = Traits<T>;
  using A = typename Tr::Acc;
  constexpr size_t kBlock = 4096 / sizeof(A);
  alignas(64) A acc[kBlock];
  for (size_t b = 0; b < n; b += kBlock) {
    const size_t m = std::min(kBlock, n - b);
    int j0 = 0;
    if (acc_in) {
      std::memcpy(acc, static_cast<const A*>(acc_in) + b, m * sizeof(A));
    } else {
      const T* x = static_cast<const T*>(srcs[0]) + b;
      for (size_t k = 0; k < m; ++k) acc[k] = Tr::load(x[k]);
      j0 = 1;
    }
    for (int j = j0; j < w; ++j) {
      const T* x = static_cast<const T*>(srcs[j]) + b;
      for (size_t k = 0; k < m; ++k) acc[k] = Op::f(acc[k], Tr::load(x[k]));
    }
    if (!outv) {
      std::memcpy(static_cast<A*>(acc_out) + b, acc, m * sizeof(A));
      continue;
    }
    T* out = static_cast<T*>(outv) + b;
    if constexpr (kAvg) {
      const A div = A(world);
      for (size_t k = 0; k < m; ++k) out[k] = Tr::store(acc[k] / div);
    } else {
      for (size_t k = 0; k < m; ++k) out[k] = Tr::store(acc[k]);
    }
  }
}

template <class T>
void dispatch_link(ReduceOp op, const void* acc_in, int w, const void* const* srcs, void* acc_out,
                   void* out, int world, size_t n) {
  if constexpr (std::is_same_v<T, bool>) {
    if (op == ReduceOp::sum || op == ReduceOp::max) fold_link_t<bool, Or, false>(acc_in, w, srcs, acc_out, out, world, n);
    else fold_link_t<bool, And, false>(acc_in, w, srcs, acc_out, out, world, n);
  } else {
    switch (op) {
      case ReduceOp::sum: fold_link_t<T, Sum, false>(acc_in, w, srcs, acc_out, out, world, n); break;
      case ReduceOp::avg: fold_link_t<T, Sum, true>(acc_in, w, srcs, acc_out, out, world, n); break;
      case ReduceOp::max: fold_link_t<T, Max, false>(acc_in, w, srcs, acc_out, out, world, n); break;
      case ReduceOp::min: fold_link_t<T, Min, false>(acc_in, w, srcs, acc_out, out, world, n); break;
      case ReduceOp::product: fold_link_t<T, Prod, false>(acc_in, w, srcs, acc_out, out, world, n); break;
    }
  }
}

template <class T>
[[gnu::always_inline]] inline void dispatch_op(ReduceOp op, int w, const void* const* srcs, void* dst, size_t n) {
  if constexpr (std::is_same_v<T, bool>) {
    if (op == ReduceOp::sum || op == ReduceOp::max) fold<bool, Or, false>(w, srcs, dst, n);
    else fold<bool, And, false>(w, srcs, dst, n);  // product, min (avg rejected before)
  } else {
    switch (op) {
      case ReduceOp::sum: fold<T, Sum, false>(w, srcs, dst, n); break;
      case ReduceOp::avg: fold<T, Sum, true>(w, srcs, dst, n); break;
      case ReduceOp::max: fold<T, Max, false>(w, srcs, dst, n); break;
      case ReduceOp::min: fold<T, Min, false>(w, srcs, dst, n); break;
      case ReduceOp::product: fold<T, Prod, false>(w, srcs, dst, n); break;
    }
  }
}

// The same code twice: for AVX2 (32-byte vectors, chosen at run time) and for
// the baseline x86-64 ISA. Both compute identical bits: the folds are
// element-wise in the same order, only the vector width differs.
#if defined(__x86_64__)
[[gnu::target("avx2")]] void reduce_avx2(DType dtype, ReduceOp op, int w, const void* const* srcs,
                                         void* dst, size_t n) {
  SF_DISPATCH(dtype, dispatch_op<T>(op, w, srcs, dst, n));
}

const bool kHaveAvx2 = __builtin_cpu_supports("avx2");
#else
const bool kHaveAvx2 = false;
#endif

void reduce_base(DType dtype, ReduceOp op, int w, const void* const* srcs, void* dst, size_t n) {
  SF_DISPATCH(dtype, dispatch_op<T>(op, w, srcs, dst, n));
}

}  // namespace

void check_reducible(DType dtype, ReduceOp op, std::string_view what) {
  SF_CHECK(!(dtype == DType::boolean && op == ReduceOp::avg),
           "{}: reduce op avg is not defined on bool tensors (bool supports sum/max = or, "
           "product/min = and)", what);
}

void reduce_kernel(DType dtype, ReduceOp op, int w, const void* const* srcs, void* dst, size_t n) {
  if (n == 0 || w <= 0) return;
#if defined(__x86_64__)
  if (kHaveAvx2) return reduce_avx2(dtype, op, w, srcs, dst, n);
#endif
  reduce_base(dtype, op, w, srcs, dst, n);
}

size_t acc_itemsize(DType dtype) {
  size_t r = 0;
  SF_DISPATCH(dtype, r = sizeof(typename Traits<T>::Acc));
  return r;
}

void fold_link(DType dtype, ReduceOp op, const void* acc_in, int w, const void* const* srcs,
               void* acc_out, void* out, int world, size_t n) {
  if (n == 0) return;
  SF_CHECK(acc_in || w > 0, "fold_link: nothing to fold");
  SF_DISPATCH(dtype, dispatch_link<T>(op, acc_in, w, srcs, acc_out, out, world, n));
}

}  // namespace symmflow::dist::detail
