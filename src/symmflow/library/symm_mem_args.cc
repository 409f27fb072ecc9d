#include "symmflow/library/symm_mem_args.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "symmflow/core/error.h"
#include "symmflow/library/dispatcher.h"

namespace symmflow {

std::vector<Operator*> Dispatcher::symm_targets_locked(std::string_view op) const {
  if (auto it = ops_.find(op); it != ops_.end() && it->second->is_defined())
    return {it->second.get()};
  std::vector<Operator*> out;
  if (op.find('.', op.find("::") == std::string_view::npos ? 0 : op.find("::") + 2) ==
      std::string_view::npos) {
    for (const auto& [name, o] : ops_) {
      std::string_view n = name;
      if (o->is_defined() && n.size() > op.size() && n.substr(0, op.size()) == op &&
          n[op.size()] == '.')
        out.push_back(o.get());
    }
  }
  if (out.empty()) fail("register_symm_mem_args({}): unknown operator '{}'", op, op);
  return out;
}

RegistrationHandle Dispatcher::register_symm_mem_args(std::string_view op,
                                                      std::vector<std::string> args) {
  SF_CHECK(!args.empty(), "register_symm_mem_args({}): expected at least one argument name, got "
                          "an empty list", op);
  for (size_t i = 0; i < args.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      SF_CHECK(args[i] != args[j], "register_symm_mem_args({}): argument '{}' is listed twice",
               op, args[i]);
  std::lock_guard lock(mu_);
  std::vector<Operator*> targets = symm_targets_locked(op);
  // Validate every target before touching any, so a failure registers nothing.
  for (Operator* t : targets) {
    const FunctionSchema& s = t->schema();
    for (const std::string& a : args) {
      const Argument* arg = s.find_argument(a);
      SF_CHECK(arg != nullptr,
               "register_symm_mem_args({}): operator {} has no argument '{}'; its arguments are: {}",
               op, t->full_name(), a, s.argument_names());
      SF_CHECK(is_tensor_like(arg->type),
               "register_symm_mem_args({}): argument '{}' of {} has type {}; only Tensor, "
               "Tensor?, Tensor[] and Tensor?[] arguments can require symmetric memory",
               op, a, t->full_name(), arg->type.to_string());
    }
    std::lock_guard op_lock(t->mu_);
    SF_CHECK(t->symm_args_.value == nullptr,
             "register_symm_mem_args({}): operator {} already has symmetric-memory arguments "
             "registered ({}); register each op once, with all its arguments",
             op, t->full_name(), fmt::join(*t->symm_args_.value, ", "));
  }
  auto value = std::make_shared<const std::vector<std::string>>(std::move(args));
  std::vector<std::pair<Operator*, uint64_t>> done;
  for (Operator* t : targets) {
    std::lock_guard op_lock(t->mu_);
    uint64_t id = next_id_++;
    t->set_symm_args({value, id, ""});
    done.emplace_back(t, id);
  }
  return RegistrationHandle([this, done] {
    std::lock_guard lock(mu_);
    for (auto [t, id] : done) {
      std::lock_guard op_lock(t->mu_);
      if (t->symm_args_.id == id) t->set_symm_args({});
    }
  });
}

RegistrationHandle register_symm_mem_args(std::string_view op, std::vector<std::string> args) {
  return Dispatcher::instance().register_symm_mem_args(op, std::move(args));
}

std::vector<std::string> symm_mem_args(const Operator& op) { return op.symm_mem_args(); }

std::vector<std::string> symm_mem_args(std::string_view full_name) {
  return Dispatcher::instance().get(full_name).symm_mem_args();
}

bool requires_symmetric_memory(std::string_view full_name, std::string_view arg) {
  const Operator& op = Dispatcher::instance().get(full_name);
  SF_CHECK(op.schema().find_argument(arg) != nullptr,
           "requires_symmetric_memory({}, {}): the op has no argument '{}'; its arguments are: {}",
           full_name, arg, arg, op.schema().argument_names());
  auto args = op.symm_mem_args();
  return std::find(args.begin(), args.end(), arg) != args.end();
}

}  // namespace symmflow
