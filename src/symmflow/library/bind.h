// Binding: turns a call's positional and keyword arguments into the bound vector
// a boxed kernel takes — one IValue per schema argument, in schema order, with
// defaults filled in and every value checked against its type.
//
//   // aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
//   auto args = bind_arguments(schema, {a, b}, {{"alpha", 2}});   // {a, b, 2}
//
// Conversions follow PyTorch: a Scalar takes an int, float or bool; a float takes
// an int; `int[2]` takes a single int (repeated); an Optional takes None.
#pragma once
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "symmflow/core/ivalue.h"
#include "symmflow/schema/function_schema.h"

namespace symmflow {

using Kwargs = std::map<std::string, IValue, std::less<>>;

// Binds or throws an Error naming the op and the argument at fault.
std::vector<IValue> bind_arguments(const FunctionSchema& schema, std::span<const IValue> positional,
                                   const Kwargs& kwargs = {});

// The outcome of a binding attempt, for overload resolution: `exact` counts the
// given values whose kind matched their type without a conversion.
struct BindAttempt {
  std::optional<std::vector<IValue>> args;  // nullopt when it did not bind
  std::string error;                        // why not (empty unless `describe`)
  int exact = 0;
};
// describe = false leaves `error` empty: overload resolution tries every overload
// on each eager call and needs the reasons only when none binds (formatting them
// cost more than the binding itself).
BindAttempt try_bind(const FunctionSchema& schema, std::span<const IValue> positional,
                     const Kwargs& kwargs, bool describe = true);

// Whether `v` can be passed as `type`; on success sets *exact (no conversion
// needed) and, if given, *converted to the value to bind (e.g. `2` for `int[2]`
// becomes `[2, 2]`).
bool value_matches(const SchemaType& type, const IValue& v, bool* exact,
                   IValue* converted = nullptr);

// "(Tensor, int, alpha=float)": a call's argument kinds, for error messages.
std::string describe_call(std::span<const IValue> positional, const Kwargs& kwargs);

}  // namespace symmflow
