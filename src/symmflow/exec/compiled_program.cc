#include "symmflow/exec/compiled_program.h"

#include <fmt/format.h>

#include "symmflow/exec/interpreter.h"
#include "symmflow/runtime/world.h"

namespace symmflow::exec {

CompiledProgram::CompiledProgram(std::unique_ptr<ir::Graph> g)
    : g_(std::move(g)), regular_(regular_allocator()) {
  symmetric_node_ = symmetric_needs(*g_).node;
  // Copies the compiler left: explicit clones it inserted, and the copies a node
  // still in functional form makes of what it writes.
  auto bytes = [](const ir::Value* v) { return v->type().numel() * int64_t(element_size(v->type().dtype)); };
  for (const ir::Node* n : g_->nodes()) {
    if (n->note().rfind("copy:", 0) == 0) {
      ++copies_;
      copy_bytes_ += bytes(n->output(0));
    } else if (n->functional()) {
      for (const auto& w : n->writes()) {
        ++copies_;
        copy_bytes_ += bytes(n->value_at(w));
      }
    }
  }
}

CompiledProgram::~CompiledProgram() = default;

void CompiledProgram::check_guards(std::span<const IValue> inputs) const {
  const auto& params = g_->inputs();
  SF_CHECK(inputs.size() == params.size(), "@{}: the program takes {} inputs, got {}", g_->name(),
           params.size(), inputs.size());
  for (size_t i = 0; i < params.size(); ++i) {
    const ir::Value* p = params[i];
    if (!p->is_tensor()) continue;
    SF_CHECK(inputs[i].is_tensor(), "@{}: input %{} must be a tensor, got {}", g_->name(), p->name(),
             inputs[i].kind_name());
    const Tensor& t = inputs[i].to_tensor();
    SF_CHECK(t.dtype() == p->type().dtype && t.sizes() == p->type().sizes && t.strides() == p->type().strides &&
                 t.storage_offset() == p->type().offset,
             "@{}: input %{} was compiled for {} with strides [{}] at offset {}, got {} with strides [{}] at offset {}",
             g_->name(), p->name(), p->type().str(), fmt::join(p->type().strides, ", "), p->type().offset,
             t.type_string(), fmt::join(t.strides(), ", "), t.storage_offset());
  }
}

std::vector<Tensor> CompiledProgram::run(std::span<const IValue> inputs) {
  check_guards(inputs);
  env_.assign(g_->num_values(), IValue());
  for (size_t i = 0; i < inputs.size(); ++i) env_[size_t(g_->inputs()[i]->id())] = inputs[i];
  regular_.rewind();
  if (symmetric_) symmetric_->rewind();
  {
    AllocatorGuard guard(regular_);
    const auto& nodes = g_->nodes();
    for (size_t i = 0; i < nodes.size(); ++i) {
      Allocator* alloc = nullptr;
      if (symmetric_node_[i]) {
        if (!symmetric_) symmetric_ = std::make_unique<ReplayAllocator>(dist::world().heap().allocator());
        alloc = symmetric_.get();
      }
      run_node(*g_, *nodes[i], env_, alloc);
    }
  }
  std::vector<Tensor> outs;
  for (const ir::Value* v : g_->outputs()) outs.push_back(env_[size_t(v->id())].to_tensor());
  // The buffers behind the outputs are the caller's from now on: later runs
  // allocate those afresh and replay only the intermediates.
  if (runs_++ == 0) {
    for (const auto& t : outs) {
      regular_.release(t.storage().get());
      if (symmetric_) symmetric_->release(t.storage().get());
    }
  }
  // Nothing but the outputs stays referenced between runs.
  env_.clear();
  return outs;
}

ProgramStats CompiledProgram::stats() const {
  ProgramStats s;
  s.runs = runs_;
  s.copies = copies_;
  s.copy_bytes = copy_bytes_;
  s.buffers = regular_.buffers();
  s.buffer_bytes = regular_.bytes();
  s.symmetric_bytes = symmetric_ ? symmetric_->bytes() : 0;
  return s;
}

}  // namespace symmflow::exec
