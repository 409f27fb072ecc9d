#include "symmflow/library/operator.h"

#include <fmt/ranges.h>

#include "symmflow/core/error.h"

namespace symmflow {

bool Operator::is_defined() const {
  std::lock_guard lock(mu_);
  return schema_.has_value();
}

const FunctionSchema& Operator::schema() const {
  SF_CHECK(defined_.load(std::memory_order_acquire),
           "operator {} has kernels but no schema: expected a def(\"{}(...) -> ...\") for it",
           full_name_, full_name_);
  return *schema_;
}

bool Operator::has_kernel(DispatchKey key) const {
  std::lock_guard lock(mu_);
  return kernels_[size_t(key)].value != nullptr;
}

std::vector<IValue> Operator::call(OpContext& ctx, std::span<const IValue> bound_args) const {
  std::shared_ptr<const Kernel> kernel;
  {
    // Hold our own reference, so a concurrent deregistration can't free the
    // kernel while it runs.
    std::lock_guard lock(mu_);
    kernel = kernels_[size_t(ctx.key())].value;
  }
  const FunctionSchema& s = schema();
  if (kernel == nullptr) {
    std::vector<std::string> have;
    for (size_t k = 0; k < kNumDispatchKeys; ++k)
      if (has_kernel(DispatchKey(k))) have.emplace_back(dispatch_key_name(DispatchKey(k)));
    fail("{}: no kernel registered for dispatch key {} (registered: {})", full_name_,
         dispatch_key_name(ctx.key()), have.empty() ? "none" : fmt::format("{}", fmt::join(have, ", ")));
  }
  size_t n = s.arguments.size();
  SF_CHECK(bound_args.size() == n || (s.is_vararg && bound_args.size() > n),
           "{}: expected {} bound arguments ({}), got {}; bind them with Dispatcher::bind",
           full_name_, n, s.argument_names(), bound_args.size());
  std::vector<IValue> out = (*kernel)(ctx, bound_args);
  SF_CHECK(s.is_varret || out.size() == s.returns.size(),
           "{}: the {} kernel returned {} values, but the schema declares {} returns", full_name_,
           dispatch_key_name(ctx.key()), out.size(), s.returns.size());
  return out;
}

std::vector<MutatedSlot> Operator::mutated_slots(std::span<const IValue> bound_args) const {
  std::shared_ptr<const MutationResolver> resolver;
  {
    std::lock_guard lock(mu_);
    resolver = resolver_.value;
  }
  if (resolver) return (*resolver)(bound_args);
  std::vector<MutatedSlot> out;
  for (size_t i : schema().mutated_arguments()) out.push_back({i, -1});
  return out;
}

bool Operator::has_mutation_resolver() const {
  std::lock_guard lock(mu_);
  return resolver_.value != nullptr;
}

std::vector<std::string> Operator::symm_mem_args() const {
  if (!has_symm_args_.load(std::memory_order_acquire)) return {};
  std::lock_guard lock(mu_);
  return symm_args_.value ? *symm_args_.value : std::vector<std::string>{};
}

}  // namespace symmflow
