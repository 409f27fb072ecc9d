// sf::compile: trace a function on its first call with a given input signature
// (dtype, sizes, strides, symmetric or not), compile the graph, cache it, and
// replay it on every later call with that signature. Calling the function itself
// runs it eagerly; both paths dispatch through the same operator library, and
// the compiled one is bitwise equal to it.
//
//   Tensor step(Tensor x, Tensor y) { return x * 2 + y; }
//   auto fast = sf::compile(step);
//   Tensor a = step(x, y);       // eager
//   Tensor b = fast(x, y);       // traced + compiled on first call, then replayed
//
// The function takes Tensors and returns a Tensor or std::vector<Tensor>. Inputs
// it writes are written (as eagerly); returned tensors are fresh on every call.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "symmflow/core/tensor.h"
#include "symmflow/passes/pipeline.h"

namespace symmflow {
namespace exec { class CompiledProgram; }

namespace frontend {

// The type-erased core of a compiled function: the signature cache.
class CompiledCache {
 public:
  using TraceFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
  CompiledCache(std::string name, passes::PipelineOptions opts);
  ~CompiledCache();
  std::vector<Tensor> call(const std::vector<Tensor>& inputs, const TraceFn& fn);
  size_t programs() const { return cache_.size(); }
  // The compiled program for these inputs' signature, or nullptr (tests, tools).
  const exec::CompiledProgram* program_for(const std::vector<Tensor>& inputs) const;

 private:
  std::string name_;
  passes::PipelineOptions opts_;
  std::map<std::string, std::unique_ptr<exec::CompiledProgram>> cache_;
};

// "f32[4,8]/8,1/sym" per input: what a cached program was compiled for.
std::string signature_of(const std::vector<Tensor>& inputs);

}  // namespace frontend

template <class F>
class CompiledFunction {
 public:
  CompiledFunction(F fn, std::string name, passes::PipelineOptions opts)
      : fn_(std::move(fn)), cache_(std::make_shared<frontend::CompiledCache>(std::move(name), std::move(opts))) {}

  template <class... A>
  auto operator()(const A&... args) {
    static_assert((std::is_convertible_v<const A&, Tensor> && ...), "compiled functions take Tensors");
    using R = std::invoke_result_t<F&, const A&...>;
    std::vector<Tensor> inputs{Tensor(args)...};
    auto outs = cache_->call(inputs, [this](const std::vector<Tensor>& t) { return as_list(apply(t, std::index_sequence_for<A...>{})); });
    if constexpr (std::is_same_v<R, std::vector<Tensor>>) return outs;
    else return outs.at(0);
  }
  size_t programs() const { return cache_->programs(); }
  const frontend::CompiledCache& cache() const { return *cache_; }

 private:
  template <size_t... I>
  auto apply(const std::vector<Tensor>& t, std::index_sequence<I...>) { return fn_(t[I]...); }
  static std::vector<Tensor> as_list(const Tensor& t) { return {t}; }
  static std::vector<Tensor> as_list(std::vector<Tensor> t) { return t; }

  F fn_;
  std::shared_ptr<frontend::CompiledCache> cache_;
};

template <class F>
CompiledFunction<std::decay_t<F>> compile(F&& fn, std::string name = "compiled", passes::PipelineOptions opts = {}) {
  return CompiledFunction<std::decay_t<F>>(std::forward<F>(fn), std::move(name), std::move(opts));
}

}  // namespace symmflow
