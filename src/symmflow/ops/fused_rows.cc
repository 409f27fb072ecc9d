#include "symmflow/ops/fused_rows.h"

#include <algorithm>
#include <optional>
#include <unordered_set>

#include "symmflow/kernels/factories.h"
#include "symmflow/ops/boxing.h"
#include "symmflow/ops/fused_rows_raw.h"
#include "symmflow/ops/fused_steps.h"

namespace symmflow::ops {

bool is_row_reduction(std::string_view full_name) {
  static const std::unordered_set<std::string_view> reductions = {"aten::sum.dim_IntList", "aten::mean.dim",
                                                                  "aten::amax", "aten::amin"};
  return reductions.count(full_name) > 0;
}

bool is_row_step(std::string_view full_name) {
  return is_fusible_pointwise(full_name) || is_row_reduction(full_name);
}

namespace {

// The steps, resolved; each reduction reduces the last dim and keeps it, in its
// input's dtype: what makes it a per-row step of a block of rows.
std::vector<const Operator*> resolve(const std::vector<FusedStep>& steps, size_t num_inputs) {
  auto ops = fused::resolve("fused_rows", steps, num_inputs, is_row_step,
                            "an elementwise op or a reduction over the last dim that can be fused");
  for (size_t j = 0; j < steps.size(); ++j) {
    const FusedStep& s = steps[j];
    if (!is_row_reduction(s.op)) continue;
    auto constant = [&](size_t i) -> const IValue* {
      return s.args[i].kind == FusedOperand::Kind::constant ? &s.args[i].constant : nullptr;
    };
    const IValue *dims = constant(1), *keepdim = constant(2);
    const bool ok = dims && dims->is_list() && dims->to_int_list() == std::vector<int64_t>{-1} && keepdim &&
                    keepdim->is_bool() && keepdim->to_bool() && (s.args.size() < 4 || (constant(3) && constant(3)->is_none()));
    SF_CHECK(ok,
             "fused_rows: step {} ({}) must reduce dims [-1] with keepdim true (and dtype None), found {}; "
             "passes/fuse_rows writes every reduction so",
             j, s.op, format_fused_program({s}));
  }
  return ops;
}

using Role = fused::RowRole;

// How the blocks view each input, given the widest shape [..., C]; nullopt when
// some step's result is neither that shape nor its per-row shape [..., 1], or
// some input takes no block view: then the steps run on whole tensors.
struct RowLayout {
  Shape shape;
  int64_t cols = 0;
  std::vector<Role> roles;
};
std::optional<RowLayout> row_layout(std::span<const Tensor> inputs, std::span<const Tensor> steps) {
  RowLayout l;
  int64_t most = -1;
  for (auto part : {inputs, steps})
    for (const Tensor& t : part)
      if (t.numel() > most) {
        most = t.numel();
        l.shape = t.sizes();
      }
  if (l.shape.empty() || most == 0) return std::nullopt;
  l.cols = l.shape.back();
  Shape per_row = l.shape;
  per_row.back() = 1;
  for (const Tensor& t : steps)
    if (t.sizes() != l.shape && t.sizes() != per_row) return std::nullopt;
  for (const Tensor& t : inputs) {
    const Shape& s = t.sizes();
    const bool leading_ones = !s.empty() && std::all_of(s.begin(), s.end() - 1, [](int64_t d) { return d == 1; });
    if (s == l.shape && t.is_contiguous()) l.roles.push_back(Role::full);
    else if (s == per_row && t.is_contiguous()) l.roles.push_back(Role::per_row);
    else if (t.numel() == 1) l.roles.push_back(Role::scalar);
    else if (leading_ones && s.back() == l.cols && t.strides().back() == 1) l.roles.push_back(Role::row);
    else return std::nullopt;
  }
  return l;
}

// What a run derives from the steps and the inputs' types and layouts alone.
struct Plan {
  std::vector<const Operator*> ops;
  std::vector<Tensor> types;              // the inputs', then each step's (the Meta kernels')
  std::optional<RowLayout> layout;        // nullopt: the steps run on whole tensors
  std::optional<fused::RawRowProgram> raw;  // nullopt: each step's kernel per block
};

Plan make_plan(std::span<const Tensor> inputs, const std::vector<FusedStep>& steps) {
  Plan p;
  p.ops = resolve(steps, inputs.size());
  p.types = fused::step_types(inputs, steps, p.ops);
  p.layout = row_layout(inputs, std::span(p.types).subspan(inputs.size()));
  if (p.layout) p.raw = fused::RawRowProgram::compile(steps, p.types, p.layout->shape, p.layout->roles);
  return p;
}

Tensor run_plan(std::span<const Tensor> inputs, const std::vector<FusedStep>& steps, const Plan& plan,
                int64_t block_bytes) {
  const std::vector<Tensor>& types = plan.types;
  const std::optional<RowLayout>& layout = plan.layout;
  const Tensor& result_type = types.back();
  if (std::any_of(inputs.begin(), inputs.end(), [](const Tensor& t) { return t.is_meta(); })) return result_type;

  // The result is the first allocation, as with every kernel: the compiled
  // program's allocator hands it the node's planned buffer (exec/arenas.h).
  Tensor out = kernels::empty_strided(result_type.sizes(), result_type.strides(), result_type.dtype());
  OpContext ctx(DispatchKey::CPU);
  // Blocks view the result row-major; one in another layout (its inputs' order,
  // from the steps' Meta kernels) gets the steps on whole tensors.
  if (!layout || !out.is_contiguous()) {
    fused::run_whole(steps, plan.ops, inputs, ctx, out);
    return out;
  }

  const int64_t cols = layout->cols, rows = numel_of(layout->shape) / cols;
  int64_t item = 1;
  for (const Tensor& t : types) item = std::max(item, int64_t(element_size(t.dtype())));
  const int64_t block = std::clamp<int64_t>(block_bytes / (cols * item), 1, rows);
  if (plan.raw) {
    // No dispatch per step: smaller blocks, so a block's intermediates stay in L1/L2.
    plan.raw->run(inputs, out, std::clamp<int64_t>(std::min(block_bytes, kRawRowBlockBytes) / (cols * item), 1, rows));
    return out;
  }
  // The result is the widest shape or the per-row one (a chain that ends in a reduction).
  const int64_t out_cols = result_type.sizes() == layout->shape ? cols : 1;
  fused::TileAllocator scratch(fused::tile_scratch_bytes(block * cols, steps.size()));
  AllocatorGuard guard(scratch);
  auto view = [&](const Tensor& t, Role role, int64_t r0, int64_t k) -> Tensor {
    switch (role) {
      case Role::full: return t.as_strided({k, cols}, {cols, 1}, t.storage_offset() + r0 * cols);
      case Role::per_row: return t.as_strided({k, 1}, {1, 1}, t.storage_offset() + r0);
      case Role::row: return t.as_strided({cols}, {1}, t.storage_offset());
      case Role::scalar: return t.dim() == 0 ? t : t.as_strided({1, 1}, {1, 1}, t.storage_offset());
    }
    return t;
  };
  std::vector<Tensor> blocks;
  for (int64_t r0 = 0; r0 < rows; r0 += block) {
    const int64_t k = std::min(block, rows - r0);
    scratch.reset();
    blocks.clear();
    for (size_t i = 0; i < inputs.size(); ++i) blocks.push_back(view(inputs[i], layout->roles[i], r0, k));
    fused::run_tile(steps, plan.ops, blocks, inputs.size(), ctx, scratch,
                    out.as_strided({k, out_cols}, {out_cols, 1}, r0 * out_cols));
  }
  return out;
}

}  // namespace

bool runs_in_row_blocks(std::span<const Tensor> inputs, const std::vector<FusedStep>& steps) {
  return make_plan(inputs, steps).layout.has_value();
}

bool runs_on_raw_rows(std::span<const Tensor> inputs, const std::vector<FusedStep>& steps) {
  return make_plan(inputs, steps).raw.has_value();
}

Tensor run_fused_rows(std::span<const Tensor> inputs, const std::vector<FusedStep>& steps, int64_t block_bytes) {
  return run_plan(inputs, steps, make_plan(inputs, steps), block_bytes);
}

namespace {

SYMMFLOW_LIBRARY_FRAGMENT(symmflow, m) {
  m.def("fused_rows(Tensor[] inputs, str program) -> Tensor");
  impl_both(m, "fused_rows", [](OpContext&, Args a) -> Results {
    const std::vector<Tensor> inputs = a[0].to_tensor_list();
    const fused::CachedProgram& program = fused::cached_program(a[1].to_string());
    return {run_plan(inputs, program.steps,
                     fused::memo_plan<Plan>(program, inputs, [&] { return make_plan(inputs, program.steps); }),
                     kFusedRowBlockBytes)};
  });
}

}  // namespace

}  // namespace symmflow::ops
