#include "symmflow/frontend/compile.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "symmflow/exec/comm_match.h"
#include "symmflow/exec/compiled_program.h"
#include "symmflow/frontend/tracer.h"
#include "symmflow/ir/verifier.h"
#include "symmflow/runtime/world.h"

namespace symmflow::frontend {

std::string signature_of(const std::vector<Tensor>& inputs) {
  std::string s;
  for (const auto& t : inputs)
    s += fmt::format("{}/{}/{}/{};", t.type_string(), fmt::join(t.strides(), ","), t.storage_offset(),
                     t.is_symmetric() ? "sym" : "reg");
  return s;
}

CompiledCache::CompiledCache(std::string name, passes::PipelineOptions opts)
    : name_(std::move(name)), opts_(std::move(opts)) {}
CompiledCache::~CompiledCache() = default;

const exec::CompiledProgram* CompiledCache::program_for(const std::vector<Tensor>& inputs) const {
  auto it = cache_.find(signature_of(inputs));
  return it == cache_.end() ? nullptr : it->second.get();
}

std::vector<Tensor> CompiledCache::call(const std::vector<Tensor>& inputs, const TraceFn& fn) {
  std::string key = signature_of(inputs);
  auto it = cache_.find(key);
  if (it == cache_.end()) {
    const bool dist = dist::is_initialized();
    Tracer tracer(name_, dist ? dist::world().rank() : 0, dist ? dist::world().size() : 1);
    std::vector<Tensor> traced;
    for (const auto& t : inputs) traced.push_back(tracer.input(t));
    tracer.set_outputs(fn(traced));
    auto g = tracer.finish();
    ir::verify(*g, "trace");
    exec::match_communication(*g);  // every rank's sends have receives, collectives agree: before any run
    passes::optimize(*g, opts_);
    it = cache_.emplace(key, std::make_unique<exec::CompiledProgram>(std::move(g))).first;
  }
  std::vector<IValue> args(inputs.begin(), inputs.end());
  return it->second->run(args);
}

}  // namespace symmflow::frontend
