// Symmetric-memory arguments: an op declares which of its tensor arguments must
// live in symmetric memory (same allocation and offset on every rank), and the
// compiler places their producers' buffers in the symmetric arena. This is
// PyTorch's `Library::register_symm_mem_args` (seed 003), with the registration
// validated against the schema.
//
//   register_symm_mem_args("symm_mem::one_shot_all_reduce", {"input"});
//   requires_symmetric_memory("symm_mem::one_shot_all_reduce", "input");   // true
//
// Which ops `op` names: the overload with that exact full name if it is defined
// ("ns::name.overload", or "ns::name" for the empty overload); otherwise, for a
// name without an overload, every overload of "ns::name" defined at the time of
// the call (each must have all the listed arguments). Overloads defined later are
// not covered: register them by full name.
//
// Errors: an unknown op; an argument the op does not have (the error lists its
// arguments); a non-tensor argument (only Tensor, Tensor?, Tensor[] and Tensor?[]);
// an empty list; a name listed twice; a second registration for the same op.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "symmflow/library/operator.h"
#include "symmflow/library/registration_handle.h"

namespace symmflow {

RegistrationHandle register_symm_mem_args(std::string_view op, std::vector<std::string> args);

// The registered arguments, in registration order (empty when none).
std::vector<std::string> symm_mem_args(const Operator& op);
std::vector<std::string> symm_mem_args(std::string_view full_name);  // unknown op: Error

// Whether argument `arg` of op `full_name` must be symmetric. An unknown op, or an
// argument the op does not have, is an Error (a typo must not read as "no").
bool requires_symmetric_memory(std::string_view full_name, std::string_view arg);

}  // namespace symmflow
