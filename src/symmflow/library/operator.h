// Operator: one registered overload (`aten::add.Tensor`) — its schema, a boxed
// kernel per DispatchKey, how it mutates its arguments, and which arguments need
// symmetric memory. Operators are owned by the Dispatcher and never freed, so an
// Operator* stays valid for the process (its registrations may come and go).
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <atomic>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "symmflow/core/ivalue.h"
#include "symmflow/library/dispatch_key.h"
#include "symmflow/library/op_context.h"
#include "symmflow/schema/function_schema.h"

namespace symmflow {

// A boxed kernel: `args` are fully bound — one IValue per schema argument, in
// schema order, defaults filled in (then any varargs). Returns one IValue per
// schema return (a `-> ()` op returns an empty vector).
using Kernel = std::function<std::vector<IValue>(OpContext& ctx, std::span<const IValue> args)>;

// A written argument: `arg` is its index in the schema; `elem` is the written
// element of a list argument, or -1 for the whole argument (every element).
struct MutatedSlot {
  size_t arg = 0;
  int64_t elem = -1;
  bool operator==(const MutatedSlot&) const = default;
};

// For ops whose writes depend on argument values (c10d::batch_isend_irecv writes
// only the irecv entries of its tensor list). Gets the bound arguments.
using MutationResolver = std::function<std::vector<MutatedSlot>(std::span<const IValue> args)>;

class Operator {
 public:
  explicit Operator(std::string full_name) : full_name_(std::move(full_name)) {}
  Operator(const Operator&) = delete;
  Operator& operator=(const Operator&) = delete;

  const std::string& full_name() const { return full_name_; }
  // False while only kernels were registered for this name (no def yet).
  bool is_defined() const;
  // The schema; an Error when the op is not defined. The reference is valid while
  // the def stays registered (removing a def while others use the op is a bug).
  const FunctionSchema& schema() const;

  bool has_kernel(DispatchKey key) const;
  // Runs the kernel for ctx.key(). An Error naming the op and the key when there is
  // none, or when the bound arguments or the results don't fit the schema.
  std::vector<IValue> call(OpContext& ctx, std::span<const IValue> bound_args) const;

  // The written slots for these bound arguments: the mutation resolver's answer if
  // one is set, else every argument with a write alias (`Tensor(a!)`,
  // `Tensor[](a!)`, `Tensor(a!)[]`) as a whole-argument slot.
  std::vector<MutatedSlot> mutated_slots(std::span<const IValue> bound_args) const;
  bool has_mutation_resolver() const;

  // Arguments that must live in symmetric memory (register_symm_mem_args).
  std::vector<std::string> symm_mem_args() const;

 private:
  friend class Dispatcher;
  template <class T>
  struct Slot {  // a registration: its value and the id its handle removes it by
    std::shared_ptr<const T> value;
    uint64_t id = 0;
    std::string where;  // who registered it, for duplicate-registration errors
  };

  std::string full_name_;
  mutable std::mutex mu_;
  std::optional<FunctionSchema> schema_;
  // schema_ is set: read without mu_ by schema(), which the compiler calls for
  // every node many times (the reference it returns was never guarded by mu_).
  std::atomic<bool> defined_{false};
  uint64_t schema_id_ = 0;
  std::string schema_where_;
  std::array<Slot<Kernel>, kNumDispatchKeys> kernels_;
  Slot<MutationResolver> resolver_;
  Slot<std::vector<std::string>> symm_args_;
  // Whether symm_args_ holds a value, read without mu_: every eager call asks
  // symm_mem_args(), and almost every op has none. Set only by set_symm_args.
  std::atomic<bool> has_symm_args_{false};
  // Replaces the registration and its flag together. Caller holds mu_.
  void set_symm_args(Slot<std::vector<std::string>> s) {
    symm_args_ = std::move(s);
    has_symm_args_.store(symm_args_.value != nullptr, std::memory_order_release);
  }
};

}  // namespace symmflow
