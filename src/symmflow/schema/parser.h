// parse_schema: reads PyTorch's schema language into a FunctionSchema.
//
//   auto s = parse_schema("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
//   auto t = parse_schema("foo(Tensor(a!) x) -> Tensor(a!)", "myops");   // default namespace
//
// A malformed schema throws SchemaParseError, whose message points at the column:
//
//   schema:1:22: expected ')' but found ','
//   aten::f(Tensor a, int,) -> ()
//                        ^
#pragma once
#include <string>
#include <string_view>

#include "symmflow/core/error.h"
#include "symmflow/schema/function_schema.h"
#include "symmflow/schema/types.h"

namespace symmflow {

class SchemaParseError : public Error {
 public:
  SchemaParseError(const std::string& what, int line, int column)
      : Error(what), line_(line), column_(column) {}
  int line() const { return line_; }      // 1-based
  int column() const { return column_; }  // 1-based, within line()

 private:
  int line_;
  int column_;
};

// `ns::name.overload(args) -> returns`; without `ns::`, default_namespace is used
// (an error when it is empty).
FunctionSchema parse_schema(std::string_view text, std::string_view default_namespace = "");

// A type without alias annotations: "Tensor", "int[2]", "Tensor?[]", "Generator?".
SchemaType parse_type(std::string_view text);

}  // namespace symmflow
