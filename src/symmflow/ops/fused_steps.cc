#include "symmflow/ops/fused_steps.h"

#include <unordered_map>
#include <utility>

#include "symmflow/kernels/copy.h"

namespace symmflow::ops::fused {

std::vector<const Operator*> resolve(std::string_view node, const std::vector<FusedStep>& steps, size_t num_inputs,
                                     bool (*allowed)(std::string_view), std::string_view kinds) {
  std::vector<const Operator*> ops;
  for (size_t j = 0; j < steps.size(); ++j) {
    const FusedStep& s = steps[j];
    SF_CHECK(allowed(s.op), "{}: step {} is {}, which is not {} (see ops/{}.cc's list)", node, j, s.op, kinds, node);
    const Operator& op = Dispatcher::instance().get(s.op);
    SF_CHECK(s.args.size() == op.schema().arguments.size(),
             "{}: step {} ({}) has {} arguments, its schema {} takes {}", node, j, s.op, s.args.size(),
             op.schema().to_string(), op.schema().arguments.size());
    for (const FusedOperand& a : s.args)
      SF_CHECK(a.kind != FusedOperand::Kind::input || size_t(a.index) < num_inputs,
               "{}: step {} reads x{}, but the op has {} inputs", node, j, a.index, num_inputs);
    ops.push_back(&op);
  }
  return ops;
}

std::vector<Tensor> step_types(std::span<const Tensor> inputs, const std::vector<FusedStep>& steps,
                               const std::vector<const Operator*>& ops) {
  OpContext meta_ctx(DispatchKey::Meta);
  std::vector<Tensor> env;
  // The inputs' strides too: a step's result takes its inputs' layout (core/layout.h).
  for (const Tensor& t : inputs) env.push_back(Tensor::meta(t.sizes(), t.dtype(), t.strides()));
  run_steps(steps, ops, env, inputs.size(), meta_ctx);
  return env;
}

TileAllocator::TileAllocator(size_t capacity) {
  thread_local std::unique_ptr<std::byte[]> buffer;
  thread_local size_t size = 0;
  if (size < capacity) {
    buffer.reset(new std::byte[capacity]);  // uninitialized: every byte is written before it is read
    size = capacity;
  }
  base_ = buffer.get();
  capacity_ = size;
}

std::shared_ptr<Storage> TileAllocator::allocate(size_t nbytes) {
  auto none = [](void*) {};
  if (target_ != nullptr && nbytes == target_bytes_) {
    void* p = std::exchange(target_, nullptr);
    return std::make_shared<Storage>(p, nbytes, none);
  }
  const size_t at = (reinterpret_cast<uintptr_t>(base_) + used_ + kAlign - 1) / kAlign * kAlign -
                    reinterpret_cast<uintptr_t>(base_);
  if (at + nbytes > capacity_) return regular_allocator().allocate(nbytes);  // never expected; still right
  used_ = at + nbytes;
  return std::make_shared<Storage>(base_ + at, nbytes, none);
}

void run_tile(const std::vector<FusedStep>& steps, const std::vector<const Operator*>& ops,
              std::vector<Tensor>& views, size_t num_inputs, OpContext& ctx, TileAllocator& scratch,
              const Tensor& dst) {
  const Tensor r = run_steps(steps, ops, views, num_inputs, ctx, [&] { scratch.target(dst.data_ptr(), dst.nbytes()); });
  if (r.data_ptr() != dst.data_ptr()) kernels::copy_(dst, r);
}

void run_whole(const std::vector<FusedStep>& steps, const std::vector<const Operator*>& ops,
               std::span<const Tensor> inputs, OpContext& ctx, const Tensor& out) {
  AllocatorGuard heap(regular_allocator());
  std::vector<Tensor> env(inputs.begin(), inputs.end());
  kernels::copy_(out, run_steps(steps, ops, env, inputs.size(), ctx));
}

InputSignature::InputSignature(std::span<const Tensor> inputs) {
  for (const Tensor& t : inputs) inputs_.push_back({t.dtype(), t.is_meta(), t.sizes(), t.strides()});
}

bool InputSignature::matches(std::span<const Tensor> inputs) const {
  if (inputs.size() != inputs_.size()) return false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Input& s = inputs_[i];
    const Tensor& t = inputs[i];
    if (s.dtype != t.dtype() || s.meta != t.is_meta() || s.sizes != t.sizes() || s.strides != t.strides()) return false;
  }
  return true;
}

const CachedProgram& cached_program(const std::string& text) {
  thread_local std::unordered_map<std::string, CachedProgram> cache;
  if (auto it = cache.find(text); it != cache.end()) return it->second;
  if (cache.size() >= 4096) cache.clear();
  return cache.emplace(text, CachedProgram{parse_fused_program(text), {}}).first->second;
}

}  // namespace symmflow::ops::fused
