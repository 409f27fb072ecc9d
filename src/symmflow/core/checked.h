// Size arithmetic that cannot wrap. Every size, count or byte total computed from
// user text (.sf types, .npy headers, op arguments) goes through these, so a
// shape such as [2^32, 2^32 + 1] is an Error naming the numbers instead of a
// silently wrapped (and then allocated or skipped) size.
//
//   int64_t n = checked_mul(rows, cols, "aten::repeat");          // Error on overflow
//   int64_t m = checked_mul(n, k, [&] { return "shape " + s; });  // context built only on failure
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "symmflow/core/error.h"

namespace symmflow {

namespace checked_detail {
// `what` names the computation: text, or a callable returning it (so a hot path
// pays nothing for a message it does not print).
template <typename What>
std::string describe(What&& what) {
  if constexpr (std::is_invocable_v<What>) return std::string(what());
  else return std::string(what);
}
template <typename What>
[[noreturn]] __attribute__((cold, noinline)) void overflow(What&& what, int64_t a, char op, int64_t b) {
  fail("{}: {} {} {} overflows a 64-bit integer (the largest is {})", describe(what), a, op, b, INT64_MAX);
}
}  // namespace checked_detail

template <typename What>
int64_t checked_mul(int64_t a, int64_t b, What&& what) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) checked_detail::overflow(what, a, '*', b);
  return r;
}

template <typename What>
int64_t checked_add(int64_t a, int64_t b, What&& what) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) checked_detail::overflow(what, a, '+', b);
  return r;
}

template <typename What>
int64_t checked_sub(int64_t a, int64_t b, What&& what) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) checked_detail::overflow(what, a, '-', b);
  return r;
}

}  // namespace symmflow
