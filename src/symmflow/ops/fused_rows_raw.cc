#include "symmflow/ops/fused_rows_raw.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

#include "symmflow/kernels/lane_extreme.h"
#include "symmflow/kernels/simd.h"
#include "symmflow/kernels/sum_order.h"
#include "symmflow/ops/fused_rows.h"

namespace symmflow::ops::fused {

namespace {

using Source = BlockProgram::Source;

// A row sum or mean step: its input must be blocks of full rows.
std::optional<RawRowProgram::Step> compile_reduction(const FusedStep& s, std::span<const RowRole> roles,
                                                     const std::vector<bool>& full) {
  RawRowProgram::Step st;
  if (s.op == "aten::sum.dim_IntList") st.kind = RawRowProgram::Step::Kind::sum;
  else if (s.op == "aten::mean.dim") st.kind = RawRowProgram::Step::Kind::mean;
  else if (s.op == "aten::amax") st.kind = RawRowProgram::Step::Kind::amax;
  else if (s.op == "aten::amin") st.kind = RawRowProgram::Step::Kind::amin;
  else return std::nullopt;
  const FusedOperand& x = s.args[0];
  const bool rows = (x.kind == FusedOperand::Kind::input && roles[size_t(x.index)] == RowRole::full) ||
                    (x.kind == FusedOperand::Kind::step && full[size_t(x.index)]);
  if (!rows) return std::nullopt;
  const bool input = x.kind == FusedOperand::Kind::input;
  st.step.args = {Source{input ? Source::Kind::input : Source::Kind::step, x.index, 0}};
  return st;
}

// An elementwise step. A full step reads a per-row input or step as one value per
// row (fused_block's scalar role), a per-row step reads them as blocks.
std::optional<RawRowProgram::Step> compile_elementwise(const FusedStep& s, std::span<const Tensor> types,
                                                       std::span<const RowRole> roles, const std::vector<bool>& full,
                                                       bool is_full) {
  std::vector<Role> block_roles;
  for (RowRole r : roles) {
    if (!is_full && (r == RowRole::full || r == RowRole::row)) block_roles.push_back(Role::strided);  // never read
    else if (r == RowRole::scalar || (is_full && r == RowRole::per_row)) block_roles.push_back(Role::scalar);
    else block_roles.push_back(Role::full);
  }
  std::unique_ptr<bool[]> values(new bool[full.size()]);
  for (size_t j = 0; j < full.size(); ++j) values[j] = is_full && !full[j];
  RawRowProgram::Step st;
  st.full = is_full;
  auto compiled = compile_step(s, types, block_roles, std::span<const bool>(values.get(), full.size()));
  if (!compiled) return std::nullopt;
  st.step = std::move(*compiled);
  for (const Source& a : st.step.args) {
    // A per-row step reads per-row operands only (a full one would make it full).
    if (a.kind == Source::Kind::input && block_roles[size_t(a.index)] == Role::strided) return std::nullopt;
    if (!is_full && a.kind == Source::Kind::step && full[size_t(a.index)]) return std::nullopt;
    const bool per_row_input = a.kind == Source::Kind::input && roles[size_t(a.index)] == RowRole::per_row;
    if (is_full && (per_row_input || (a.kind == Source::Kind::step && !full[size_t(a.index)]))) st.per_row_call = true;
  }
  return st;
}

// The sums (or means) of k rows of n: reduce.cc's dense rows, the ordered sum
// (sum_order.h), then / n in T.
template <typename T, bool kMean>
void row_sums(const T* x, int64_t n, int64_t k, T* dst) {
  kernels::simd::run([&] {
    for (int64_t r = 0; r < k; ++r) {
      const T total = kernels::ordered_sum_here(x + r * n, n);
      dst[r] = kMean ? total / T(n) : total;
    }
  });
}

// The maxima (kMax) or minima of k rows of n: the row extreme of reduce.cc's
// amax/amin over the last dim (lane_extreme.h's row_extreme_here), so the bits
// are eager's.
template <typename T, bool kMax>
void row_extremes(const T* x, int64_t n, int64_t k, T* dst) {
  kernels::simd::run([&] {
    for (int64_t r = 0; r < k; ++r) dst[r] = kernels::row_extreme_here<kMax>(x + r * n, n);
  });
}

// Whether a step reads source `a` as a block, else one value (per row for a full
// step: a per-row input or step; per run: a constant or a one-element input). A
// per-row step reads per-row inputs and steps as blocks of the block's rows.
bool reads_block(const Source& a, std::span<const RowRole> roles, const std::vector<RawRowProgram::Step>& steps,
                 bool full_step) {
  switch (a.kind) {
    case Source::Kind::constant: return false;
    case Source::Kind::step: return steps[size_t(a.index)].full || !full_step;
    case Source::Kind::input: {
      const RowRole r = roles[size_t(a.index)];
      return r == RowRole::full || r == RowRole::row || (!full_step && r == RowRole::per_row);
    }
  }
  return false;
}

// Composes each step that only the next step reads into it (compose_pair), both
// full (x * rstd * w) or both per-row (mean + eps, then rsqrt).
void compose_pairs(RawRowProgram& p) {
  std::vector<int> reads(p.steps.size(), 0);
  for (const RawRowProgram::Step& s : p.steps)
    for (const Source& a : s.step.args)
      if (a.kind == Source::Kind::step) ++reads[size_t(a.index)];
  for (size_t j = 0; j + 1 < p.steps.size(); ++j) {
    RawRowProgram::Step &first = p.steps[j], &second = p.steps[j + 1];
    const bool elementwise = first.kind == RawRowProgram::Step::Kind::elementwise &&
                             second.kind == RawRowProgram::Step::Kind::elementwise;
    if (!elementwise || first.full != second.full || reads[j] != 1) continue;
    if (compose_pair(p.dtype, int(j), first.step, second.step,
                     [&](const Source& a) { return reads_block(a, p.roles, p.steps, second.full); }))
      second.per_row_call = first.per_row_call || second.per_row_call;
  }
}

template <typename T>
void run_as(const RawRowProgram& p, std::span<const Tensor> inputs, const Tensor& out, int64_t block_rows) {
  const int64_t cols = p.cols, rows = numel_of(out.sizes()) / (p.steps.back().full ? cols : 1);
  const size_t last = p.steps.size() - 1;
  // Scratch: one block per step but the last (which writes the result), each its
  // own, so no kernel's output overlaps its operand (the dense loop would run
  // scalar). A full block starts at the result's address modulo 4 KiB, so a
  // load from it never matches a result store still in flight in its low 12 bits
  // (4K aliasing, the likely cause: with blocks placed anyhow RMSNorm 1M took
  // 1.8x as long in a median of 60 calls; docs/performance.md).
  constexpr size_t kPage = 4096;
  const size_t full_bytes = (size_t(block_rows * cols) * sizeof(T) + kPage - 1) / kPage * kPage;
  const auto row_inputs = std::count(p.roles.begin(), p.roles.end(), RowRole::row);
  size_t need = 2 * kPage + size_t(row_inputs) * full_bytes;
  for (size_t j = 0; j < last; ++j)
    if (!p.steps[j].step.into_next) need += p.steps[j].full ? full_bytes : size_t(block_rows) * sizeof(T);
  thread_local std::unique_ptr<std::byte[]> scratch;
  thread_local size_t capacity = 0;
  if (capacity < need) {
    scratch.reset(new std::byte[need]);  // every element is written before it is read
    capacity = need;
  }
  T* const result = static_cast<T*>(out.data_ptr());
  const uintptr_t start = reinterpret_cast<uintptr_t>(scratch.get());
  std::byte* next = scratch.get() + ((kPage - start % kPage) % kPage) + reinterpret_cast<uintptr_t>(result) % kPage;
  std::vector<T*> buf(p.steps.size());
  for (size_t j = 0; j < last; ++j)
    if (p.steps[j].full && !p.steps[j].step.into_next) buf[j] = reinterpret_cast<T*>(std::exchange(next, next + full_bytes));
  // A row input, repeated over a block's rows once per run, is read as a full block.
  std::vector<const T*> base(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    base[i] = static_cast<const T*>(inputs[i].data_ptr());
    if (p.roles[i] != RowRole::row) continue;
    T* own = reinterpret_cast<T*>(std::exchange(next, next + full_bytes));
    for (int64_t r = 0; r < block_rows; ++r) std::copy_n(base[i], cols, own + r * cols);
    base[i] = own;
  }
  for (size_t j = 0; j < last; ++j)
    if (!p.steps[j].full && !p.steps[j].step.into_next)
      buf[j] = reinterpret_cast<T*>(std::exchange(next, next + block_rows * sizeof(T)));

  // Each step's operands, resolved once per run: a block of the step's shape (row
  // r of block r0 at p + r0 * shift + r * stride: a full step's per-row call has
  // r > 0), one value per row (per_row[r0 * shift + r]), or one value v.
  struct Operand {
    const T* p = nullptr;
    int64_t stride = 0, shift = 0;
    const T* per_row = nullptr;
    double v = 0;
    BlockArg at(int64_t r0, int64_t r) const {  // a whole BlockArg: see below
      if (per_row) return {nullptr, double(per_row[r0 * shift + r])};
      return {p ? p + r0 * shift + r * stride : nullptr, v};
    }
  };
  auto operand = [&](const Source& a, bool full_step) -> Operand {
    switch (a.kind) {
      case Source::Kind::constant: return {.v = a.value};
      case Source::Kind::step: {
        const T* s = buf[size_t(a.index)];
        if (p.steps[size_t(a.index)].full) return {.p = s, .stride = cols};
        return full_step ? Operand{.per_row = s} : Operand{.p = s};
      }
      case Source::Kind::input: {
        const T* x = base[size_t(a.index)];
        switch (p.roles[size_t(a.index)]) {
          case RowRole::full: return {.p = x, .stride = cols, .shift = cols};
          case RowRole::row: return {.p = x, .stride = cols};  // the repeated row
          case RowRole::per_row: return full_step ? Operand{.shift = 1, .per_row = x} : Operand{.p = x, .shift = 1};
          case RowRole::scalar: return {.v = double(x[0])};
        }
      }
    }
    return {};
  };
  std::vector<std::array<Operand, 3>> operands(p.steps.size());
  for (size_t j = 0; j <= last; ++j)
    for (size_t a = 0; a < p.steps[j].step.args.size(); ++a)
      operands[j][a] = operand(p.steps[j].step.args[a], p.steps[j].full || p.steps[j].kind != RawRowProgram::Step::Kind::elementwise);

  for (int64_t r0 = 0; r0 < rows; r0 += block_rows) {
    const int64_t k = std::min(block_rows, rows - r0);
    T* const dst_last = result + r0 * (p.steps[last].full ? cols : 1);
    for (size_t j = 0; j <= last; ++j) {
      const RawRowProgram::Step& s = p.steps[j];
      if (s.step.into_next) continue;
      const std::array<Operand, 3>& ops = operands[j];
      T* const dst = j == last ? dst_last : buf[j];
      if (s.kind != RawRowProgram::Step::Kind::elementwise) {
        const T* x = static_cast<const T*>(ops[0].at(r0, 0).p);
        switch (s.kind) {
          case RawRowProgram::Step::Kind::sum: row_sums<T, false>(x, cols, k, dst); break;
          case RawRowProgram::Step::Kind::mean: row_sums<T, true>(x, cols, k, dst); break;
          case RawRowProgram::Step::Kind::amax: row_extremes<T, true>(x, cols, k, dst); break;
          case RawRowProgram::Step::Kind::amin: row_extremes<T, false>(x, cols, k, dst); break;
          case RawRowProgram::Step::Kind::elementwise: break;
        }
        continue;
      }
      // Whole BlockArgs each call: a store of one field then a load of the pair
      // fails to forward and stalls (3.5 us of RMSNorm 64K's 21 when one did).
      const size_t arity = s.step.args.size();
      std::array<BlockArg, 3> args;
      const int64_t calls = s.per_row_call ? k : 1, n = s.per_row_call ? cols : k * (s.full ? cols : 1);
      for (int64_t r = 0; r < calls; ++r) {
        for (size_t a = 0; a < arity; ++a) args[a] = ops[a].at(r0, r);
        s.step.kernel(args.data(), s.step.params, dst + r * n, n);
      }
    }
  }
}

}  // namespace

std::optional<RawRowProgram> RawRowProgram::compile(const std::vector<FusedStep>& steps, std::span<const Tensor> types,
                                                    const Shape& shape, std::span<const RowRole> roles) {
  RawRowProgram p;
  p.dtype = types.back().dtype();
  p.cols = shape.back();
  p.roles.assign(roles.begin(), roles.end());
  // Rows of one element: reduce.cc sums them by another path (no dense run to reduce).
  if ((p.dtype != DType::f32 && p.dtype != DType::f64) || p.cols < 2) return std::nullopt;
  if (std::any_of(types.begin(), types.end(), [&](const Tensor& t) { return t.dtype() != p.dtype; })) return std::nullopt;
  std::vector<bool> full;
  for (size_t j = 0; j < steps.size(); ++j) full.push_back(types[roles.size() + j].sizes() == shape);
  for (size_t j = 0; j < steps.size(); ++j) {
    auto st = is_row_reduction(steps[j].op) ? compile_reduction(steps[j], roles, full)
                        : compile_elementwise(steps[j], types, roles, full, full[j]);
    if (!st) return std::nullopt;
    p.steps.push_back(std::move(*st));
  }
  compose_pairs(p);
  return p;
}

void RawRowProgram::run(std::span<const Tensor> inputs, const Tensor& out, int64_t block_rows) const {
  if (dtype == DType::f32) run_as<float>(*this, inputs, out, block_rows);
  else run_as<double>(*this, inputs, out, block_rows);
}

}  // namespace symmflow::ops::fused
