#include "symmflow/ops/fused_block.h"

#include <algorithm>
#include <array>
#include <limits>
#include <memory>
#include <string_view>

#include "symmflow/kernels/gelu_erf.h"
#include "symmflow/kernels/pointwise.h"
#include "symmflow/kernels/pointwise_impl.h"

namespace symmflow::ops::fused {

namespace {

using namespace kernels::pointwise_detail;
namespace fn = kernels::functors;
using Source = BlockProgram::Source;

// ---- the kernels: eager's loops on raw blocks -------------------------------------

template <typename T, bool Dense>
auto operand(const BlockArg& a) {
  if constexpr (Dense) return DenseIn<T>{static_cast<const T*>(a.p)};
  else return BcastIn<T>{T(a.v)};
}

// Op::make<T>(params) is the element function eager's kernel builds for the op
// (binary.cc, unary.cc), run by eager's dense loop.
template <typename T, typename Op, bool D0>
void unary_kernel(const BlockArg* a, const double* params, void* out, int64_t n) {
  run_dense(static_cast<T*>(out), n, Op::template make<T>(params), operand<T, D0>(a[0]));
}
template <typename T, typename Op, bool D0, bool D1>
void binary_kernel(const BlockArg* a, const double* params, void* out, int64_t n) {
  run_dense(static_cast<T*>(out), n, Op::template make<T>(params), operand<T, D0>(a[0]), operand<T, D1>(a[1]));
}
// A comparison (compare.cc: binary's loop with a bool result).
template <typename T, typename F, bool D0, bool D1>
void compare_kernel(const BlockArg* a, const double*, void* out, int64_t n) {
  run_dense(static_cast<bool*>(out), n, F{}, operand<T, D0>(a[0]), operand<T, D1>(a[1]));
}
// where(cond, a, b) (binary.cc's where_impl: elementwise<T, bool, T, T> over Where).
template <typename T, bool Dc, bool Da, bool Db>
void where_kernel(const BlockArg* a, const double*, void* out, int64_t n) {
  run_dense(static_cast<T*>(out), n, fn::Where{}, operand<bool, Dc>(a[0]), operand<T, Da>(a[1]),
            operand<T, Db>(a[2]));
}
// A SLEEF function over the block: map_runs' path for a contiguous run.
template <typename T, kernels::vec::Fn F>
void vec_kernel(const BlockArg* a, const double*, void* out, int64_t n) {
  kernels::vec::map(F, static_cast<const T*>(a[0].p), static_cast<T*>(out), n);
}

// The binary kernel instance for operands that are blocks (true) or one value
// each; two values make a one-element step, never the result's shape.
template <typename T, typename Op>
BlockKernel binary_pick(bool d0, bool d1) {
  if (d0) return d1 ? &binary_kernel<T, Op, true, true> : &binary_kernel<T, Op, true, false>;
  return d1 ? &binary_kernel<T, Op, false, true> : nullptr;
}
template <typename T, typename F>
BlockKernel compare_pick(bool d0, bool d1) {
  if (d0) return d1 ? &compare_kernel<T, F, true, true> : &compare_kernel<T, F, true, false>;
  return d1 ? &compare_kernel<T, F, false, true> : nullptr;
}
template <typename T, bool Dc>
BlockKernel where_pick(bool da, bool db) {
  if (da) return db ? &where_kernel<T, Dc, true, true> : &where_kernel<T, Dc, true, false>;
  return db ? &where_kernel<T, Dc, false, true> : (Dc ? &where_kernel<T, Dc, false, false> : nullptr);
}
// A unary kernel reads a block (its operand has the result's shape).
template <typename T, typename Op>
constexpr BlockKernel dense_unary = &unary_kernel<T, Op, true>;

// The element functions, each built as its eager kernel builds it.
template <typename F>
struct Plain {
  template <typename T> static F make(const double*) { return F{}; }
};
struct AddOp {  // add_impl
  template <typename T> static auto make(const double* p) {
    const T al = T(p[0]);
    return [al](T x, T y) { return fn::Add{}(x, y, al); };
  }
};
struct SubOp {  // sub_impl
  template <typename T> static auto make(const double* p) {
    const T al = T(p[0]);
    return [al](T x, T y) { return fn::Sub{}(x, y, al); };
  }
};
struct ClampOp {  // clamp_impl
  template <typename T> static auto make(const double* p) {
    const T lo = T(p[0]), hi = T(p[1]);
    return [lo, hi](T x) { return fn::Clamp{}(x, lo, hi); };
  }
};
struct SquareOp {  // pow_scalar_impl's loop of its own for an exponent of 2
  template <typename T> static auto make(const double*) {
    return [](T x) { return x * x; };
  }
};
struct PowScalarOp {  // pow_scalar_impl, f32/f64
  template <typename T> static fn::PowScalar make(const double* p) { return fn::PowScalar{p[0]}; }
};

// The unary table's functor F (pointwise.h): SLEEF's map when it has one (unary_vec),
// else the dense loop (unary).
template <typename T, typename F>
BlockKernel functor_kernel() {
  if constexpr (requires { F::kVec; }) return &vec_kernel<T, F::kVec>;
  else return dense_unary<T, Plain<F>>;
}

// sin and cos too: vec::map calls SLEEF's per-lane variants, so an element's
// bits do not depend on where a block starts (vec_math.h).
template <typename T>
BlockKernel unary_table_kernel(std::string_view op) {
#define SF_BLOCK_UNARY(name, F, to_float, dtypes)                     \
  if constexpr (((dtypes) & kFloats) != 0) {                          \
    if (op == "aten::" #name) return functor_kernel<T, fn::F>();      \
  }
  SF_POINTWISE_UNARY_OPS(SF_BLOCK_UNARY)
#undef SF_BLOCK_UNARY
  return nullptr;
}

// ---- two steps in one loop (compose_pair) --------------------------------------------

// -ffp-contract=off: t is rounded to T as the first kernel's store rounds it.
template <typename T, typename Op1, bool A, bool B, typename Op2, bool FirstLeft, bool C>
void binary_binary_kernel(const BlockArg* a, const double* params, void* out, int64_t n) {
  const auto f = Op1::template make<T>(params);
  const auto g = Op2::template make<T>(params + 2);
  auto fg = [f, g](T x, T y, T z) {
    const T t = f(x, y);
    if constexpr (FirstLeft) return g(t, z);
    else return g(z, t);
  };
  run_dense(static_cast<T*>(out), n, fg, operand<T, A>(a[0]), operand<T, B>(a[1]), operand<T, C>(a[2]));
}
template <typename T, typename Op1, bool A, bool B, typename Op2>
void binary_unary_kernel(const BlockArg* a, const double* params, void* out, int64_t n) {
  const auto f = Op1::template make<T>(params);
  const auto g = Op2::template make<T>(params + 2);
  auto fg = [f, g](T x, T y) {
    const T t = f(x, y);
    return g(t);
  };
  run_dense(static_cast<T*>(out), n, fg, operand<T, A>(a[0]), operand<T, B>(a[1]));
}
template <typename T, typename Op1, typename Op2, bool FirstLeft, bool C>
void unary_binary_kernel(const BlockArg* a, const double* params, void* out, int64_t n) {
  const auto f = Op1::template make<T>(params);
  const auto g = Op2::template make<T>(params + 2);
  auto fg = [f, g](T x, T z) {
    const T t = f(x);
    if constexpr (FirstLeft) return g(t, z);
    else return g(z, t);
  };
  run_dense(static_cast<T*>(out), n, fg, operand<T, true>(a[0]), operand<T, C>(a[1]));
}

using Arith = BlockProgram::Step::Arith;

// Calls pick(tag) with the element function eager builds for `k` (as StepCompiler picks it).
template <typename Pick>
void with_binary(Arith k, Pick&& pick) {
  switch (k) {
    case Arith::add: return pick(AddOp{});
    case Arith::sub: return pick(SubOp{});
    case Arith::mul: return pick(Plain<fn::Mul>{});
    case Arith::div: return pick(Plain<fn::Div>{});
    default: return;
  }
}
template <typename Pick>
void with_unary(Arith k, Pick&& pick) {
  if (k == Arith::relu) pick(Plain<fn::Relu>{});
  if (k == Arith::rsqrt) pick(Plain<fn::Rsqrt>{});
}

// The kernel of a composed pair: a and b (a binary first op) are a block and a
// value or two blocks, c (a binary second op) a block, or a value right of the op.
template <typename T>
BlockKernel pair_pick(Arith first, bool a, bool b, Arith second, bool first_left, bool c) {
  BlockKernel k = nullptr;
  auto second_of = [&]<typename O1, bool A, bool B>() {
    with_binary(second, [&](auto o2) {
      using O2 = decltype(o2);
      if (first_left) k = c ? &binary_binary_kernel<T, O1, A, B, O2, true, true> : &binary_binary_kernel<T, O1, A, B, O2, true, false>;
      else if (c) k = &binary_binary_kernel<T, O1, A, B, O2, false, true>;
    });
    with_unary(second, [&](auto o2) { k = &binary_unary_kernel<T, O1, A, B, decltype(o2)>; });
  };
  with_binary(first, [&](auto o1) {
    using O1 = decltype(o1);
    if (a && b) second_of.template operator()<O1, true, true>();
    else if (a) second_of.template operator()<O1, true, false>();
    else if (b) second_of.template operator()<O1, false, true>();
  });
  with_unary(first, [&](auto o1) {
    with_binary(second, [&](auto o2) {
      using O1 = decltype(o1);
      using O2 = decltype(o2);
      if (first_left) k = c ? &unary_binary_kernel<T, O1, O2, true, true> : &unary_binary_kernel<T, O1, O2, true, false>;
      else if (c) k = &unary_binary_kernel<T, O1, O2, false, true>;
    });
  });
  return k;
}

// ---- compiling a step ----------------------------------------------------------------

template <typename T>
class StepCompiler {
 public:
  StepCompiler(std::span<const Tensor> types, std::span<const Role> roles, std::span<const bool> value_steps = {})
      : types_(types), roles_(roles), value_steps_(value_steps) {}

  // Fills `st` with step `s`'s kernel and sources; false when the blocks do not run it.
  bool compile(const FusedStep& s, BlockProgram::Step& st) {
    st_ = &st;
    args_ = &s.args;
    const std::string_view op = s.op;
    st.arith = Arith::none;
    if (op == "aten::add.Tensor" || op == "aten::add.Scalar")
      return alpha(2) && binary(binary_pick<T, AddOp>, 0, 1, false, Arith::add);
    if (op == "aten::sub.Tensor" || op == "aten::sub.Scalar")
      return alpha(2) && binary(binary_pick<T, SubOp>, 0, 1, false, Arith::sub);
    // rsub(self, other, alpha) is sub(other, self, alpha) (binary.cc's rsub).
    if (op == "aten::rsub.Tensor" || op == "aten::rsub.Scalar")
      return alpha(2) && binary(binary_pick<T, SubOp>, 1, 0, false, Arith::sub);
    if (op == "aten::mul.Tensor" || op == "aten::mul.Scalar")
      return binary(binary_pick<T, Plain<fn::Mul>>, 0, 1, true, Arith::mul);
    if (op == "aten::div.Tensor" || op == "aten::div.Scalar")
      return binary(binary_pick<T, Plain<fn::Div>>, 0, 1, true, Arith::div);
    if (op == "aten::div.Tensor_mode" || op == "aten::div.Scalar_mode") {
      const IValue& mode = s.args[2].constant;
      if (s.args[2].kind != FusedOperand::Kind::constant) return false;
      if (mode.is_none()) return binary(binary_pick<T, Plain<fn::Div>>, 0, 1, true, Arith::div);
      if (!mode.is_string()) return false;
      if (mode.to_string() == "trunc") return binary(binary_pick<T, Plain<fn::DivTrunc>>, 0, 1, false);
      if (mode.to_string() == "floor") return binary(binary_pick<T, Plain<fn::DivFloor>>, 0, 1, false);
      return false;
    }
#define SF_BLOCK_COMPARE(name, F)                                                        \
    if (op == "aten::" #name ".Tensor" || op == "aten::" #name ".Scalar")                 \
      return binary(compare_pick<T, fn::F>, 0, 1, false);
    SF_POINTWISE_COMPARE_OPS(SF_BLOCK_COMPARE)
#undef SF_BLOCK_COMPARE
    if (op == "aten::where.self" || op == "aten::where.ScalarSelf" || op == "aten::where.ScalarOther") {
      const auto c = source(0, false, DType::boolean), x = source(1, false), y = source(2, false);
      if (!c || !x || !y || c->kind == Source::Kind::constant) return false;
      st.kernel = dense(*c) ? where_pick<T, true>(dense(*x), dense(*y)) : where_pick<T, false>(dense(*x), dense(*y));
      st.args = {*c, *x, *y};
      return st.kernel != nullptr;
    }
    if (op == "aten::pow.Tensor_Tensor") return binary(binary_pick<T, Plain<fn::Pow>>, 0, 1, false);
    if (op == "aten::maximum") return binary(binary_pick<T, Plain<fn::Maximum>>, 0, 1, false);
    if (op == "aten::minimum") return binary(binary_pick<T, Plain<fn::Minimum>>, 0, 1, false);
    if (op == "aten::pow.Tensor_Scalar") {
      const auto e = scalar(1);
      if (!e) return false;
      st.params[0] = e->to_double();
      return st.params[0] == 2.0 ? unary(dense_unary<T, SquareOp>) : unary(dense_unary<T, PowScalarOp>);
    }
    if (op == "aten::clamp") return bounds(1, 2, false) && unary(dense_unary<T, ClampOp>);
    if (op == "aten::clamp_min") return bounds(1, -1, true) && unary(dense_unary<T, ClampOp>);
    if (op == "aten::clamp_max") return bounds(-1, 1, true) && unary(dense_unary<T, ClampOp>);
    if (op == "aten::gelu") {
      const IValue& how = s.args[1].constant;
      if (s.args[1].kind != FusedOperand::Kind::constant || !how.is_string()) return false;
      if (how.to_string() == "none") return unary(functor_kernel<T, fn::Gelu>());
      if (how.to_string() == "tanh") return unary(dense_unary<T, Plain<fn::GeluTanh>>);
      return false;
    }
    if (BlockKernel k = unary_table_kernel<T>(op)) {
      if (s.args.size() != 1 || !unary(k)) return false;
      // Only where the kernel is the dense loop over that functor (what a pair runs).
      if (k == dense_unary<T, Plain<fn::Relu>>) st.arith = Arith::relu;
      if (k == dense_unary<T, Plain<fn::Rsqrt>>) st.arith = Arith::rsqrt;
      return true;
    }
    return false;
  }

 private:
  // A Scalar constant argument.
  std::optional<Scalar> scalar(size_t i) const {
    const FusedOperand& o = (*args_)[i];
    if (o.kind != FusedOperand::Kind::constant || !o.constant.is_scalar()) return std::nullopt;
    return Scalar::from(o.constant);
  }
  // An operand of the functor: a tensor of dtype T (an input or a step; bool:
  // a where's condition), or a Scalar constant converted as eager converts it
  // (scalar_value).
  std::optional<Source> source(size_t i, bool opmath, std::optional<DType> want = std::nullopt) const {
    const FusedOperand& o = (*args_)[i];
    if (o.kind == FusedOperand::Kind::constant) {
      const auto s = scalar(i);
      if (!s) return std::nullopt;
      return Source{Source::Kind::constant, 0, double(scalar_value<T>(*s, opmath))};
    }
    const bool input = o.kind == FusedOperand::Kind::input;
    const size_t at = input ? size_t(o.index) : roles_.size() + size_t(o.index);
    if (types_[at].dtype() != want.value_or(types_.back().dtype())) return std::nullopt;  // eager would convert it
    return Source{input ? Source::Kind::input : Source::Kind::step, o.index, 0};
  }
  // Whether a source is a block (else one value for every element).
  bool dense(const Source& s) const {
    if (s.kind == Source::Kind::step) return value_steps_.empty() || !value_steps_[size_t(s.index)];
    return (s.kind == Source::Kind::input && roles_[size_t(s.index)] != Role::scalar);
  }
  bool alpha(size_t i) {
    const auto a = scalar(i);
    if (a) st_->params[0] = double(scalar_value<T>(*a));
    return a.has_value();
  }
  // A clamp bound: a Scalar, None (no bound), or false (a tensor).
  bool bound_arg(int at, std::optional<Scalar>& s) const {
    if (at < 0) return true;
    const FusedOperand& o = (*args_)[size_t(at)];
    if (o.kind != FusedOperand::Kind::constant) return false;
    if (o.constant.is_none()) return true;
    s = scalar(size_t(at));
    return s.has_value();
  }
  // clamp's bounds as clamp_impl takes them (-1: not an argument of the op). A
  // NaN bound that makes every element NaN (both bounds given, or clamp_min/max)
  // is left to the tiles.
  bool bounds(int lo_at, int hi_at, bool one_bound_op) {
    std::optional<Scalar> lo, hi;
    if (!bound_arg(lo_at, lo) || !bound_arg(hi_at, hi)) return false;
    const bool nan = (lo && std::isnan(lo->to_double())) || (hi && std::isnan(hi->to_double()));
    if (nan && ((lo && hi) || one_bound_op)) return false;
    using L = std::numeric_limits<T>;
    st_->params[0] = double(lo ? scalar_value<T>(*lo) : -L::infinity());
    st_->params[1] = double(hi ? scalar_value<T>(*hi) : L::infinity());
    return true;
  }
  // `k` over the step's first argument, a block.
  bool unary(BlockKernel k) {
    const auto x = source(0, false);
    if (!x || !dense(*x)) return false;
    st_->kernel = k;
    st_->args = {*x};
    return k != nullptr;
  }
  bool binary(BlockKernel (*p)(bool, bool), size_t i, size_t j, bool opmath,
              BlockProgram::Step::Arith arith = BlockProgram::Step::Arith::none) {
    const auto x = source(i, opmath), y = source(j, opmath);
    if (!x || !y) return false;
    st_->kernel = p(dense(*x), dense(*y));
    st_->args = {*x, *y};
    st_->arith = arith;
    return st_->kernel != nullptr;
  }

  std::span<const Tensor> types_;
  std::span<const Role> roles_;
  std::span<const bool> value_steps_;  // empty: every step's result is a block
  BlockProgram::Step* st_ = nullptr;
  const std::vector<FusedOperand>* args_ = nullptr;
};

// Scratch blocks: each step's result gets one that no later step still reads.
// Never the block of its own operand: the dense loop's vector code checks that
// its output does not overlap an input and runs scalar when it does.
void assign_buffers(BlockProgram& p) {
  const int n = int(p.steps.size());
  std::vector<int> last_read(size_t(n), -1);
  for (int j = 0; j < n; ++j)
    for (const Source& a : p.steps[size_t(j)].args)
      if (a.kind == Source::Kind::step) last_read[size_t(a.index)] = j;
  std::vector<int> free;
  std::vector<bool> released(size_t(n), false);
  auto release = [&](int step) {
    if (!released[size_t(step)] && p.steps[size_t(step)].buffer >= 0) free.push_back(p.steps[size_t(step)].buffer);
    released[size_t(step)] = true;
  };
  for (int j = 0; j < n; ++j) {
    BlockProgram::Step& st = p.steps[size_t(j)];
    if (j + 1 < n && !st.into_next) {  // the last step writes the result; a composed one none
      if (free.empty()) {
        st.buffer = p.buffers++;
      } else {
        st.buffer = free.back();
        free.pop_back();
      }
    }
    for (const Source& a : st.args)
      if (a.kind == Source::Kind::step && last_read[size_t(a.index)] == j) release(a.index);
    if (last_read[size_t(j)] < 0) release(j);  // nothing reads it
  }
}

template <typename T>
std::optional<BlockProgram> compile_as(const std::vector<FusedStep>& steps, std::span<const Tensor> types,
                                       std::span<const Role> roles) {
  BlockProgram p;
  p.dtype = types.back().dtype();
  p.roles.assign(roles.begin(), roles.end());
  // Every input of the chain's dtype, or a bool mask of the result's shape or of one
  // element (the steps check which operand reads which).
  for (size_t i = 0; i < roles.size(); ++i) {
    const bool mask = types[i].dtype() == DType::boolean && (roles[i] == Role::full || roles[i] == Role::scalar);
    if (types[i].dtype() != p.dtype && !mask) return std::nullopt;
  }
  StepCompiler<T> c(types, roles);
  for (size_t j = 0; j < steps.size(); ++j) {
    const DType d = types[roles.size() + j].dtype();
    if (d != p.dtype && d != DType::boolean) return std::nullopt;
    BlockProgram::Step st;
    if (!c.compile(steps[j], st)) return std::nullopt;
    if (std::is_same_v<T, float> && st.kernel == functor_kernel<T, fn::Gelu>() && kernels::vec::gelu_erf_calls_onednn())
      p.block_bytes = kOneDnnBlockBytes;
    p.steps.push_back(std::move(st));
  }
  // Steps only the next one reads run with it (compose_pair); every source is a
  // block but a constant and a one-element input.
  std::vector<int> reads(p.steps.size(), 0);
  for (const BlockProgram::Step& st : p.steps)
    for (const Source& a : st.args)
      if (a.kind == Source::Kind::step) ++reads[size_t(a.index)];
  for (size_t j = 0; j + 1 < p.steps.size(); ++j)
    if (reads[j] == 1)
      compose_pair(p.dtype, int(j), p.steps[j], p.steps[j + 1], [&](const Source& a) {
        return a.kind == Source::Kind::step || (a.kind == Source::Kind::input && roles[size_t(a.index)] != Role::scalar);
      });
  assign_buffers(p);
  return p;
}

// ---- running it --------------------------------------------------------------------

// A strided input's elements [begin, begin + n) of the result, gathered (rank 1
// or 2: what tile_layout calls strided).
template <typename T>
void gather(const Tensor& t, int64_t begin, int64_t n, T* dst) {
  const T* base = static_cast<const T*>(t.data_ptr());
  const Shape& st = t.strides();
  if (t.dim() == 1) {
    for (int64_t k = 0; k < n; ++k) dst[k] = base[(begin + k) * st[0]];
    return;
  }
  const int64_t cols = t.sizes()[1];
  int64_t r = begin / cols, c = begin % cols;
  for (int64_t k = 0; k < n;) {  // row segments: a copy each where the columns are dense
    const int64_t len = std::min(n - k, cols - c);
    const T* src = base + r * st[0] + c * st[1];
    if (st[1] == 1) std::copy_n(src, len, dst + k);
    else
      for (int64_t e = 0; e < len; ++e) dst[k + e] = src[e * st[1]];
    k += len;
    c = 0;
    ++r;
  }
}

// Whether every strided input is a rank-2 view with dense rows (a column slice of
// a grid: halo2d's stencil operands), which blocks that stay within one row read
// in place; gathering them cost halo2d's compiled step 2.3x its time.
bool strided_rows_in_place(std::span<const Tensor> inputs, std::span<const Role> roles) {
  bool any = false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (roles[i] != Role::strided) continue;
    if (inputs[i].dim() != 2 || inputs[i].strides()[1] != 1) return false;
    any = true;
  }
  return any;
}

template <typename T>
void run_as(const BlockProgram& p, std::span<const Tensor> inputs, const Tensor& out, int64_t max_block_bytes) {
  const int64_t n = out.numel();
  const int64_t cols = out.sizes().back();
  const int64_t want = std::max<int64_t>(1, std::min(max_block_bytes, p.block_bytes) / int64_t(sizeof(T)));
  // With a row operand every block starts on a row: whole rows, the row repeated
  // over one block once per run, or pieces of one row when a row is longer than a
  // block (then the row is read in place).
  // Strided inputs with dense rows are read in place, by blocks within one row.
  const bool has_row = std::count(p.roles.begin(), p.roles.end(), Role::row) > 0;
  const bool rows_in_place = strided_rows_in_place(inputs, p.roles);
  const bool pieces = (has_row && cols > want) || rows_in_place;
  const int64_t block = has_row && !pieces ? want / cols * cols : want;
  const auto own_blocks = std::count_if(p.roles.begin(), p.roles.end(), [&](Role r) {
    return (r == Role::strided && !rows_in_place) || (r == Role::row && !pieces);
  });
  const size_t need = size_t(p.buffers + own_blocks) * size_t(block);
  thread_local std::unique_ptr<T[]> scratch;
  thread_local size_t capacity = 0;
  if (capacity < need) {
    scratch.reset(new T[need]);  // every element is written before it is read
    capacity = need;
  }
  T* next = scratch.get();
  auto take = [&] { return std::exchange(next, next + block); };
  std::vector<T*> buffers;
  for (int b = 0; b < p.buffers; ++b) buffers.push_back(take());

  std::vector<BlockArg> in(inputs.size());
  std::vector<T*> own(inputs.size(), nullptr);
  std::vector<const T*> base(inputs.size());
  std::vector<const bool*> mask(inputs.size(), nullptr);  // a bool input (full or one element)
  for (size_t i = 0; i < inputs.size(); ++i) {
    const T* data = base[i] = static_cast<const T*>(inputs[i].data_ptr());
    if (inputs[i].dtype() == DType::boolean) mask[i] = static_cast<const bool*>(inputs[i].data_ptr());
    switch (p.roles[i]) {
      case Role::scalar: in[i] = {nullptr, mask[i] ? double(mask[i][0]) : double(data[0])}; break;
      case Role::strided:
        if (!rows_in_place) own[i] = take();
        break;
      case Role::row:
        if (!pieces) {
          own[i] = take();
          for (int64_t k = 0; k < block; k += cols) std::copy_n(data, cols, own[i] + k);
        }
        break;
      case Role::full: break;
    }
  }

  // Each step's operands, resolved once: a step's block and a constant stay put;
  // an input operand is patched per block (`reads`: step, operand, input).
  const size_t last = p.steps.size() - 1;
  std::vector<std::array<BlockArg, 3>> args(p.steps.size());
  std::vector<std::array<size_t, 3>> reads;
  std::vector<T*> dst(p.steps.size());
  for (size_t j = 0; j <= last; ++j) {
    const BlockProgram::Step& st = p.steps[j];
    if (st.into_next) continue;
    if (j < last) dst[j] = buffers[size_t(st.buffer)];
    for (size_t k = 0; k < st.args.size(); ++k) {
      const Source& s = st.args[k];
      switch (s.kind) {
        case Source::Kind::input: reads.push_back({j, k, size_t(s.index)}); break;
        case Source::Kind::step: args[j][k] = {buffers[size_t(p.steps[size_t(s.index)].buffer)], 0}; break;
        case Source::Kind::constant: args[j][k] = {nullptr, s.value}; break;
      }
    }
  }
  T* const result = static_cast<T*>(out.data_ptr());
  auto run_block = [&](int64_t begin, int64_t len) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      switch (p.roles[i]) {
        case Role::full: in[i].p = mask[i] ? static_cast<const void*>(mask[i] + begin) : base[i] + begin; break;
        case Role::row: in[i].p = pieces ? base[i] + begin % cols : own[i]; break;
        case Role::strided:
          if (rows_in_place) {
            in[i].p = base[i] + begin / cols * inputs[i].strides()[0] + begin % cols;
          } else {
            gather(inputs[i], begin, len, own[i]);
            in[i].p = own[i];
          }
          break;
        case Role::scalar: break;
      }
    }
    for (const auto& [j, k, i] : reads) args[j][k] = in[i];
    dst[last] = result + begin;
    for (size_t j = 0; j <= last; ++j)
      if (!p.steps[j].into_next) p.steps[j].kernel(args[j].data(), p.steps[j].params, dst[j], len);
  };
  if (pieces) {
    for (int64_t r = 0; r < n; r += cols)
      for (int64_t c = 0; c < cols; c += block) run_block(r + c, std::min(block, cols - c));
  } else {
    for (int64_t begin = 0; begin < n; begin += block) run_block(begin, std::min(block, n - begin));
  }
}

}  // namespace

std::optional<BlockProgram> BlockProgram::compile(const std::vector<FusedStep>& steps, std::span<const Tensor> types,
                                                  std::span<const Role> roles) {
  switch (types.back().dtype()) {
    case DType::f32: return compile_as<float>(steps, types, roles);
    case DType::f64: return compile_as<double>(steps, types, roles);
    default: return std::nullopt;
  }
}

std::optional<BlockProgram::Step> compile_step(const FusedStep& step, std::span<const Tensor> types,
                                               std::span<const Role> roles, std::span<const bool> value_steps) {
  BlockProgram::Step st;
  bool ok = false;
  switch (types.back().dtype()) {
    case DType::f32: ok = StepCompiler<float>(types, roles, value_steps).compile(step, st); break;
    case DType::f64: ok = StepCompiler<double>(types, roles, value_steps).compile(step, st); break;
    default: break;
  }
  if (!ok) return std::nullopt;
  return st;
}

bool compose_pair(DType dtype, int index, BlockProgram::Step& first, BlockProgram::Step& second,
                  const std::function<bool(const Source&)>& block) {
  if (first.arith == Arith::none || second.arith == Arith::none || (dtype != DType::f32 && dtype != DType::f64))
    return false;
  auto is_first = [&](const Source& a) { return a.kind == Source::Kind::step && a.index == index; };
  const bool unary_second = second.args.size() == 1;
  const bool left = is_first(second.args[0]);
  if (!left && (unary_second || !is_first(second.args[1]))) return false;
  if (!unary_second && left && is_first(second.args[1])) return false;  // first * first: read twice
  std::vector<Source> args = first.args;
  if (!unary_second) args.push_back(second.args[left ? 1 : 0]);
  const bool a = block(first.args[0]), b = first.args.size() == 2 && block(first.args[1]);
  const bool c = !unary_second && block(args.back());
  const BlockKernel k = dtype == DType::f32 ? pair_pick<float>(first.arith, a, b, second.arith, left, c)
                                            : pair_pick<double>(first.arith, a, b, second.arith, left, c);
  if (k == nullptr) return false;
  second.params[2] = second.params[0], second.params[3] = second.params[1];
  second.params[0] = first.params[0], second.params[1] = first.params[1];
  second.kernel = k;
  second.args = std::move(args);
  second.arith = Arith::none;
  first.into_next = true;
  return true;
}

void BlockProgram::run(std::span<const Tensor> inputs, const Tensor& out, int64_t max_block_bytes) const {
  if (dtype == DType::f32) run_as<float>(*this, inputs, out, max_block_bytes);
  else run_as<double>(*this, inputs, out, max_block_bytes);
}

}  // namespace symmflow::ops::fused
