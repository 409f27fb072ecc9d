// What the fused ops (symmflow::fused_pointwise, symmflow::fused_rows) share: a
// program's steps resolved to operators and run over a set of tensors, the steps'
// types from the Meta kernels, the per-thread scratch a tile's intermediates live
// in, and the per-thread cache of parsed programs. Internal to ops/.
#pragma once
#include <any>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "symmflow/core/storage.h"
#include "symmflow/library/dispatcher.h"
#include "symmflow/ops/fused_pointwise.h"

namespace symmflow::ops::fused {

// The step ops, resolved and checked once per run: each is one `allowed` takes
// (what `kinds` names in the error) and has exactly its schema's arguments.
std::vector<const Operator*> resolve(std::string_view node, const std::vector<FusedStep>& steps, size_t num_inputs,
                                     bool (*allowed)(std::string_view), std::string_view kinds);

// Runs every step once over `env` (the inputs, then each step's result
// appended); before_last runs just before the last step's kernel.
template <class BeforeLast>
Tensor run_steps(const std::vector<FusedStep>& steps, const std::vector<const Operator*>& ops,
                 std::vector<Tensor>& env, size_t num_inputs, OpContext& ctx, BeforeLast&& before_last) {
  env.resize(num_inputs);
  std::vector<IValue> args;
  for (size_t j = 0; j < steps.size(); ++j) {
    args.clear();
    for (const FusedOperand& a : steps[j].args) {
      if (a.kind == FusedOperand::Kind::constant) args.push_back(a.constant);
      else args.emplace_back(env[a.kind == FusedOperand::Kind::input ? size_t(a.index) : num_inputs + size_t(a.index)]);
    }
    if (j + 1 == steps.size()) before_last();
    env.push_back(ops[j]->call(ctx, args).at(0).to_tensor());
  }
  return env.back();
}

inline Tensor run_steps(const std::vector<FusedStep>& steps, const std::vector<const Operator*>& ops,
                        std::vector<Tensor>& env, size_t num_inputs, OpContext& ctx) {
  return run_steps(steps, ops, env, num_inputs, ctx, [] {});
}

// The steps' types from the Meta kernels: the inputs, then each step's result.
std::vector<Tensor> step_types(std::span<const Tensor> inputs, const std::vector<FusedStep>& steps,
                               const std::vector<const Operator*>& ops);

// A bump allocator over one scratch buffer per thread (grown, never shrunk):
// a tile's intermediates, reset for each tile, so a run allocates no data buffers
// after the first. The next allocation of exactly `target_bytes` after
// target() is the result tile itself, so the last step writes the result in
// place; a kernel that allocates a temporary first just gets scratch, and the
// caller copies.
class TileAllocator : public Allocator {
 public:
  explicit TileAllocator(size_t capacity);
  void reset() {
    used_ = 0;
    target_ = nullptr;
  }
  void target(void* p, size_t bytes) {
    target_ = p;
    target_bytes_ = bytes;
  }
  std::shared_ptr<Storage> allocate(size_t nbytes) override;

 private:
  static constexpr size_t kAlign = 64;
  std::byte* base_ = nullptr;
  size_t capacity_ = 0, used_ = 0;
  void* target_ = nullptr;
  size_t target_bytes_ = 0;
};

// Bytes of scratch for tiles of `elements` elements: each step's tile of at most
// 8-byte elements, plus room for a kernel's temporary (a converted operand) per step.
inline size_t tile_scratch_bytes(int64_t elements, size_t steps) {
  return size_t(elements) * 8 * 2 * (steps + 1) + 64 * 2 * (steps + 1);
}

// Runs every step once on one tile's views of the inputs (reset `scratch` first),
// the last step into `dst`: in place when its kernel allocates its result
// first, else copied.
void run_tile(const std::vector<FusedStep>& steps, const std::vector<const Operator*>& ops,
              std::vector<Tensor>& views, size_t num_inputs, OpContext& ctx, TileAllocator& scratch,
              const Tensor& dst);

// The steps on whole tensors, copied into `out`: for inputs no tile can view
// (the intermediates come from the heap, not from the planned buffer).
void run_whole(const std::vector<FusedStep>& steps, const std::vector<const Operator*>& ops,
               std::span<const Tensor> inputs, OpContext& ctx, const Tensor& out);

// A parsed program and what its op derived from it for the inputs it last ran on
// (memo_plan: the types, layout and block program of one input signature; a
// compiled program runs a node on one signature every iteration).
struct CachedProgram {
  std::vector<FusedStep> steps;
  mutable std::any memo;
};

// What a plan made from a program's inputs depends on: each input's dtype,
// sizes, strides and whether it is meta. Compared in place, so a call that finds
// its plan allocates nothing.
class InputSignature {
 public:
  explicit InputSignature(std::span<const Tensor> inputs);
  bool matches(std::span<const Tensor> inputs) const;

 private:
  struct Input {
    DType dtype;
    bool meta;
    Shape sizes, strides;
  };
  std::vector<Input> inputs_;
};

// `program`'s plan for `inputs`: the one its last run made when their signature
// is the same (a compiled program's node: every call but the first), else
// make() (a Plan), kept for the next call. One plan per program and thread; an
// op that makes another Plan type from the same text just makes its own again.
template <class Plan, class Make>
const Plan& memo_plan(const CachedProgram& program, std::span<const Tensor> inputs, Make&& make) {
  struct Memo {
    InputSignature signature;
    Plan plan;
  };
  if (const auto* m = std::any_cast<Memo>(&program.memo); m != nullptr && m->signature.matches(inputs)) return m->plan;
  program.memo = Memo{InputSignature(inputs), make()};
  return std::any_cast<Memo>(&program.memo)->plan;
}

// A compiled program runs the same nodes every iteration: each thread parses a
// program text once (a bounded cache: a program with more distinct fused nodes
// than this parses again, still right).
const CachedProgram& cached_program(const std::string& text);

}  // namespace symmflow::ops::fused
