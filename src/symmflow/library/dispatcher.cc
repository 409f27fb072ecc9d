#include "symmflow/library/dispatcher.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "symmflow/core/error.h"

namespace symmflow {

namespace {
std::string by(std::string_view where) {
  return where.empty() ? std::string() : fmt::format(" (by {})", where);
}

std::string schemas_of(const std::vector<Operator*>& ops) {
  std::string s;
  for (const Operator* op : ops) s += "\n  " + op->schema().to_string();
  return s;
}

// "ns::name.overload" -> "ns::name"
std::string_view qualified_part(std::string_view full_name) {
  size_t sep = full_name.find("::");
  size_t dot = full_name.find('.', sep == std::string_view::npos ? 0 : sep + 2);
  return full_name.substr(0, dot);
}
}  // namespace

Dispatcher& Dispatcher::instance() {
  // Leaked on purpose: static libraries and plugins deregister at exit in any
  // order, and must always find the registry alive.
  static Dispatcher* d = new Dispatcher();
  return *d;
}

Operator& Dispatcher::slot(const std::string& full_name) {
  auto it = ops_.find(full_name);
  if (it == ops_.end())
    it = ops_.emplace(full_name, std::make_unique<Operator>(full_name)).first;
  return *it->second;
}

Operator* Dispatcher::find(std::string_view full_name) const {
  std::lock_guard lock(mu_);
  auto it = ops_.find(full_name);
  return it != ops_.end() && it->second->is_defined() ? it->second.get() : nullptr;
}

Operator& Dispatcher::defined_locked(std::string_view full_name) const {
  auto it = ops_.find(full_name);
  if (it != ops_.end() && it->second->is_defined()) return *it->second;
  std::vector<std::string> names;
  std::string_view q = qualified_part(full_name);
  for (const auto& [name, op] : ops_)
    if (op->is_defined() && qualified_part(name) == q) names.push_back(name);
  if (names.empty()) fail("unknown operator '{}'", full_name);
  fail("unknown operator '{}'; defined overloads of {}: {}", full_name, q, fmt::join(names, ", "));
}

Operator& Dispatcher::get(std::string_view full_name) const {
  std::lock_guard lock(mu_);
  return defined_locked(full_name);
}

std::vector<Operator*> Dispatcher::overloads(std::string_view qualified_name) const {
  std::lock_guard lock(mu_);
  return overloads_locked(qualified_name);
}

std::vector<Operator*> Dispatcher::overloads_locked(std::string_view qualified_name) const {
  std::vector<Operator*> out;
  for (auto it = ops_.lower_bound(qualified_name); it != ops_.end(); ++it) {
    std::string_view name = it->first;
    if (name.substr(0, qualified_name.size()) != qualified_name) break;
    bool same = name.size() == qualified_name.size() || name[qualified_name.size()] == '.';
    if (same && it->second->is_defined()) out.push_back(it->second.get());
  }
  return out;
}

std::shared_ptr<const std::vector<Operator*>> Dispatcher::cached_overloads(std::string_view qualified_name) const {
  std::lock_guard lock(mu_);
  if (auto it = overload_cache_.find(qualified_name); it != overload_cache_.end()) return it->second;
  auto found = std::make_shared<const std::vector<Operator*>>(overloads_locked(qualified_name));
  if (found->empty()) return found;  // unknown names are not remembered (no growth from typos)
  return overload_cache_.emplace(std::string(qualified_name), std::move(found)).first->second;
}

std::vector<Operator*> Dispatcher::all_operators() const {
  std::lock_guard lock(mu_);
  std::vector<Operator*> out;
  for (const auto& [name, op] : ops_)
    if (op->is_defined()) out.push_back(op.get());
  return out;  // the map keeps them sorted by full name
}

std::pair<Operator*, std::vector<IValue>> Dispatcher::resolve(std::string_view name,
                                                              std::span<const IValue> positional,
                                                              const Kwargs& kwargs) const {
  if (qualified_part(name) != name) {  // a full name: no choice to make
    Operator& op = get(name);
    return {&op, bind_arguments(op.schema(), positional, kwargs)};
  }
  const auto cached = cached_overloads(name);
  const std::vector<Operator*>& candidates = *cached;
  if (candidates.empty()) fail("unknown operator '{}'", name);
  // The winner so far, by (most exact kind matches, then fewest arguments filled
  // from defaults, as PyTorch's argument parser prefers in effect: arange(0, 6) is
  // arange.start, not arange.start_step with step=1); `tie` when another overload
  // binds exactly as well. Kept in locals, not vectors: this runs on every eager
  // call (a Python op call's floor, docs/performance.md).
  auto defaulted = [&](Operator* op) { return op->schema().arguments.size() - positional.size() - kwargs.size(); };
  Operator* win = nullptr;
  BindAttempt win_bind;
  size_t win_defaulted = 0;
  bool tie = false;
  for (Operator* op : candidates) {
    BindAttempt a = try_bind(op->schema(), positional, kwargs, /*describe=*/false);
    if (!a.args) continue;
    const size_t d = defaulted(op);
    if (win == nullptr || a.exact > win_bind.exact || (a.exact == win_bind.exact && d < win_defaulted)) {
      win = op;
      win_bind = std::move(a);
      win_defaulted = d;
      tie = false;
    } else if (a.exact == win_bind.exact && d == win_defaulted) {
      tie = true;
    }
  }
  if (win == nullptr) {  // every overload refused: now say why, each in its own words
    auto why = [&](Operator* op) { return try_bind(op->schema(), positional, kwargs).error; };
    if (candidates.size() == 1) throw Error(why(candidates[0]));  // its own error says it best
    std::string errors;
    for (Operator* op : candidates) errors += fmt::format("\n  {}\n    -> {}", op->schema().to_string(), why(op));
    fail("no overload of {} accepts the arguments {}; candidates:{}", name, describe_call(positional, kwargs), errors);
  }
  if (tie) {
    std::vector<Operator*> winners;
    for (Operator* op : candidates) {
      BindAttempt a = try_bind(op->schema(), positional, kwargs, /*describe=*/false);
      if (a.args && a.exact == win_bind.exact && defaulted(op) == win_defaulted) winners.push_back(op);
    }
    fail("ambiguous call to {} with arguments {}: these overloads match equally well:{}", name,
         describe_call(positional, kwargs), schemas_of(winners));
  }
  return {win, std::move(*win_bind.args)};
}

RegistrationHandle Dispatcher::def(FunctionSchema schema, std::string_view where) {
  SF_CHECK(!schema.ns.empty(), "def({}): expected a namespaced schema (ns::name)", schema.to_string());
  std::lock_guard lock(mu_);
  const std::string full = schema.full_name();
  Operator& op = slot(full);
  std::lock_guard op_lock(op.mu_);
  if (op.schema_)
    fail("operator {} is already defined{}: {}\n  new definition{}: {}", full, by(op.schema_where_),
         op.schema_->to_string(), by(where), schema.to_string());
  uint64_t id = next_id_++;
  op.schema_ = std::move(schema);
  op.defined_.store(true, std::memory_order_release);
  op.schema_id_ = id;
  op.schema_where_ = std::string(where);
  overload_cache_.clear();
  return RegistrationHandle([this, &op, id] {
    std::lock_guard lock(mu_);
    std::lock_guard op_lock(op.mu_);
    if (op.schema_id_ != id) return;
    overload_cache_.clear();
    op.defined_.store(false, std::memory_order_release);
    op.schema_.reset();
    op.schema_id_ = 0;
    // Declarations about the schema go with it; kernels stay (their libraries own them).
    op.resolver_ = {};
    op.set_symm_args({});
  });
}

RegistrationHandle Dispatcher::impl(std::string_view full_name, DispatchKey key, Kernel kernel,
                                    std::string_view where) {
  SF_CHECK(full_name.find("::") != std::string_view::npos,
           "impl: expected a namespaced operator name (ns::name[.overload]), got '{}'", full_name);
  SF_CHECK(kernel != nullptr, "impl({}, {}): the kernel is empty", full_name, dispatch_key_name(key));
  std::lock_guard lock(mu_);
  Operator& op = slot(std::string(full_name));
  std::lock_guard op_lock(op.mu_);
  auto& k = op.kernels_[size_t(key)];
  if (k.value)
    fail("operator {} already has a {} kernel{}; a second one{} is not allowed", full_name,
         dispatch_key_name(key), by(k.where), by(where));
  uint64_t id = next_id_++;
  k = {std::make_shared<const Kernel>(std::move(kernel)), id, std::string(where)};
  return RegistrationHandle([this, &op, key, id] {
    std::lock_guard lock(mu_);
    std::lock_guard op_lock(op.mu_);
    if (op.kernels_[size_t(key)].id == id) op.kernels_[size_t(key)] = {};
  });
}

RegistrationHandle Dispatcher::set_mutation_resolver(std::string_view full_name,
                                                     MutationResolver fn) {
  SF_CHECK(fn != nullptr, "set_mutation_resolver({}): the resolver is empty", full_name);
  std::lock_guard lock(mu_);
  Operator& op = defined_locked(full_name);
  std::lock_guard op_lock(op.mu_);
  SF_CHECK(op.resolver_.value == nullptr, "operator {} already has a mutation resolver", full_name);
  uint64_t id = next_id_++;
  op.resolver_ = {std::make_shared<const MutationResolver>(std::move(fn)), id, ""};
  return RegistrationHandle([this, &op, id] {
    std::lock_guard lock(mu_);
    std::lock_guard op_lock(op.mu_);
    if (op.resolver_.id == id) op.resolver_ = {};
  });
}

RegistrationHandle Dispatcher::claim_namespace(std::string_view ns, std::string_view where) {
  std::lock_guard lock(mu_);
  if (auto it = namespace_owner_.find(ns); it != namespace_owner_.end())
    fail("namespace '{}' already has a SYMMFLOW_LIBRARY{}; a second one{} is not allowed: use "
         "SYMMFLOW_LIBRARY_FRAGMENT({}, m) to add ops to an existing namespace",
         ns, by(it->second), by(where), ns);
  namespace_owner_.emplace(std::string(ns), std::string(where));
  return RegistrationHandle([this, ns = std::string(ns)] {
    std::lock_guard lock(mu_);
    namespace_owner_.erase(ns);
  });
}

}  // namespace symmflow
