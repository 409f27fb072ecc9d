// Dispatcher: the process-wide operator registry. Libraries register into it (see
// library.h, which is what op authors use); the runtime, the tracer and the
// compiler look operators up, bind arguments and call kernels through it.
//
//   auto& d = Dispatcher::instance();
//   auto [op, args] = d.resolve("aten::add", {a, b}, {{"alpha", 2}});
//   OpContext ctx(DispatchKey::CPU);
//   std::vector<IValue> out = op->call(ctx, args);
//
// Registration is thread-safe. Every registration returns a RegistrationHandle
// that undoes it.
#pragma once
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "symmflow/library/bind.h"
#include "symmflow/library/operator.h"
#include "symmflow/library/registration_handle.h"

namespace symmflow {

class Dispatcher {
 public:
  static Dispatcher& instance();

  // --- lookup -------------------------------------------------------------
  // The defined op with this full name ("aten::add.Tensor"; "aten::relu" for the
  // empty overload), or nullptr.
  Operator* find(std::string_view full_name) const;
  // Like find, but an unknown op is an Error (listing the overloads of the name, if any).
  Operator& get(std::string_view full_name) const;
  // Every defined overload of "ns::name", sorted by full name.
  std::vector<Operator*> overloads(std::string_view qualified_name) const;
  // Every defined op, sorted by full name.
  std::vector<Operator*> all_operators() const;

  // --- calls --------------------------------------------------------------
  std::vector<IValue> bind(const FunctionSchema& schema, std::span<const IValue> positional,
                           const Kwargs& kwargs = {}) const {
    return bind_arguments(schema, positional, kwargs);
  }
  std::vector<IValue> bind(const FunctionSchema& schema, std::initializer_list<IValue> positional,
                           const Kwargs& kwargs = {}) const {
    return bind_arguments(schema, std::span<const IValue>(positional.begin(), positional.size()),
                          kwargs);
  }
  // Picks the overload of `name` ("ns::name", or a full name to skip the choice)
  // that these arguments bind to. When several bind, the one with the most exact
  // kind matches wins (a Tensor prefers `add.Tensor`, a number `add.Scalar`); a
  // tie, or no match, is an Error listing the candidate schemas.
  std::pair<Operator*, std::vector<IValue>> resolve(std::string_view name,
                                                    std::span<const IValue> positional,
                                                    const Kwargs& kwargs = {}) const;
  std::pair<Operator*, std::vector<IValue>> resolve(std::string_view name,
                                                    std::initializer_list<IValue> positional,
                                                    const Kwargs& kwargs = {}) const {
    return resolve(name, std::span<const IValue>(positional.begin(), positional.size()), kwargs);
  }
  // resolve, then Operator::call: the one-line eager call.
  std::vector<IValue> call(std::string_view name, OpContext& ctx,
                           std::span<const IValue> positional, const Kwargs& kwargs = {}) const {
    auto [op, args] = resolve(name, positional, kwargs);
    return op->call(ctx, args);
  }
  std::vector<IValue> call(std::string_view name, OpContext& ctx,
                           std::initializer_list<IValue> positional,
                           const Kwargs& kwargs = {}) const {
    return call(name, ctx, std::span<const IValue>(positional.begin(), positional.size()), kwargs);
  }

  // --- registration (op authors use Library; these are its primitives) -----
  // `where` names the registering library in error messages ("SYMMFLOW_LIBRARY at x.cc:12").
  RegistrationHandle def(FunctionSchema schema, std::string_view where = "");
  // A kernel may be registered before its def (static init order across files is
  // unspecified); the op is callable once both exist.
  RegistrationHandle impl(std::string_view full_name, DispatchKey key, Kernel kernel,
                          std::string_view where = "");
  RegistrationHandle set_mutation_resolver(std::string_view full_name, MutationResolver fn);
  // Validated against the schema; see symm_mem_args.h for the rules.
  RegistrationHandle register_symm_mem_args(std::string_view op, std::vector<std::string> args);
  // One DEF library per namespace (as TORCH_LIBRARY): a second claim is an Error.
  RegistrationHandle claim_namespace(std::string_view ns, std::string_view where);

 private:
  Dispatcher() = default;
  // The Operator for a full name, created on first use. Caller holds mu_.
  Operator& slot(const std::string& full_name);
  Operator& defined_locked(std::string_view full_name) const;  // Error when unknown
  // The ops `op` names for register_symm_mem_args (exact name, else all overloads).
  std::vector<Operator*> symm_targets_locked(std::string_view op) const;
  // overloads(), remembered per name until the next def or undef: resolve runs on
  // every eager call, and walking ops_ for the overloads cost more than binding.
  std::shared_ptr<const std::vector<Operator*>> cached_overloads(std::string_view qualified_name) const;
  std::vector<Operator*> overloads_locked(std::string_view qualified_name) const;  // caller holds mu_

  mutable std::mutex mu_;
  // Operators are never erased: pointers to them stay valid for the process.
  std::map<std::string, std::unique_ptr<Operator>, std::less<>> ops_;
  std::map<std::string, std::string, std::less<>> namespace_owner_;  // ns -> where
  uint64_t next_id_ = 1;
  mutable std::map<std::string, std::shared_ptr<const std::vector<Operator*>>, std::less<>> overload_cache_;
};

}  // namespace symmflow
