#include "symmflow/schema/function_schema.h"

#include <gtest/gtest.h>

#include "symmflow/schema/parser.h"

namespace symmflow {
namespace {

TEST(AliasInfo, ParsesEveryForm) {
  auto s = parse_schema(
      "a::f(Tensor(a) v, Tensor(b!) w, Tensor(c -> *) x, Tensor(d|e) y, Tensor(*) z, "
      "Tensor(f! -> g) u) -> ()");
  const auto& args = s.arguments;
  EXPECT_EQ(*args[0].alias, (AliasInfo{{"a"}, {"a"}, false}));
  EXPECT_EQ(*args[1].alias, (AliasInfo{{"b"}, {"b"}, true}));
  EXPECT_EQ(*args[2].alias, (AliasInfo{{"c"}, {"*"}, false}));
  EXPECT_EQ(*args[3].alias, (AliasInfo{{"d", "e"}, {"d", "e"}, false}));
  EXPECT_EQ(*args[4].alias, (AliasInfo{{"*"}, {"*"}, false}));
  EXPECT_EQ(*args[5].alias, (AliasInfo{{"f"}, {"g"}, true}));
  EXPECT_EQ(args[2].alias->to_string(), "(c -> *)");
  EXPECT_EQ(args[3].alias->to_string(), "(d|e)");
  EXPECT_EQ(args[5].alias->to_string(), "(f! -> g)");
}

TEST(AliasInfo, ListAliasVersusElementAlias) {
  auto s = parse_schema("a::f(Tensor[](a!) xs, Tensor(b!)[] ys, Tensor[] zs) -> Tensor[](a!)");
  const auto& xs = s.arguments[0];
  const auto& ys = s.arguments[1];
  EXPECT_TRUE(xs.alias && xs.alias->is_write);
  EXPECT_FALSE(xs.elem_alias);
  EXPECT_FALSE(ys.alias);
  EXPECT_TRUE(ys.elem_alias && ys.elem_alias->is_write);
  EXPECT_EQ(xs.to_string(), "Tensor[](a!) xs");
  EXPECT_EQ(ys.to_string(), "Tensor(b!)[] ys");
  EXPECT_EQ(xs.type, ys.type);  // aliases are not part of the type
  EXPECT_EQ(s.mutated_arguments(), (std::vector<size_t>{0, 1}));
  EXPECT_EQ(s.aliased_input_of_return(0), 0u);
}

TEST(FunctionSchema, MutationQueries) {
  auto add = parse_schema("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  EXPECT_FALSE(add.is_mutable());
  EXPECT_TRUE(add.mutated_arguments().empty());
  EXPECT_EQ(add.aliased_input_of_return(0), std::nullopt);

  auto out = parse_schema(
      "aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)");
  EXPECT_TRUE(out.is_mutable());
  EXPECT_EQ(out.mutated_arguments(), (std::vector<size_t>{3}));
  EXPECT_EQ(out.aliased_input_of_return(0), 3u);

  auto noret = parse_schema("symm_mem::f_(Tensor(a!) input, str reduce_op) -> ()");
  EXPECT_EQ(noret.mutated_arguments(), (std::vector<size_t>{0}));
  EXPECT_EQ(noret.aliased_input_of_return(0), std::nullopt);  // out of range

  auto view = parse_schema("aten::slice.Tensor(Tensor(a) self, int dim=0) -> Tensor(a)");
  EXPECT_FALSE(view.is_mutable());  // a view aliases but does not write
  EXPECT_EQ(view.aliased_input_of_return(0), 0u);

  auto split = parse_schema("aten::split(Tensor(a -> *) self, SymInt size) -> Tensor(a)[]");
  EXPECT_EQ(split.aliased_input_of_return(0), 0u);  // element alias matches list alias

  auto two = parse_schema(
      "a::f(Tensor(a!) x, Tensor(b!) y, Tensor z) -> (Tensor(b!), Tensor(a!), Tensor)");
  EXPECT_EQ(two.aliased_input_of_return(0), 1u);
  EXPECT_EQ(two.aliased_input_of_return(1), 0u);
  EXPECT_EQ(two.aliased_input_of_return(2), std::nullopt);

  auto wild = parse_schema("a::f(Tensor(*) x) -> Tensor(*)");
  EXPECT_EQ(wild.aliased_input_of_return(0), std::nullopt);
}

TEST(FunctionSchema, EqualityCoversEveryField) {
  const char* base = "a::f.o(Tensor(a!) x, *, int y=1) -> Tensor(a!)";
  auto s = parse_schema(base);
  EXPECT_EQ(s, parse_schema(base));
  EXPECT_NE(s, parse_schema("a::f.o(Tensor(a) x, *, int y=1) -> Tensor(a!)"));
  EXPECT_NE(s, parse_schema("a::f.o(Tensor(a!) x, int y=1) -> Tensor(a!)"));
  EXPECT_NE(s, parse_schema("a::f.o(Tensor(a!) x, *, int y=2) -> Tensor(a!)"));
  EXPECT_NE(s, parse_schema("a::f.p(Tensor(a!) x, *, int y=1) -> Tensor(a!)"));
  EXPECT_NE(s, parse_schema("a::f.o(Tensor(a!) x, *, int y=1) -> (Tensor(a!) r)"));
  EXPECT_NE(s, parse_schema("a::f.o(Tensor(a!) x, *, int y=1) -> ()"));
}

TEST(FunctionSchema, ArgumentNamesForMessages) {
  EXPECT_EQ(parse_schema("a::f(Tensor x, int y) -> ()").argument_names(), "x, y");
  EXPECT_EQ(parse_schema("a::f() -> ()").argument_names(), "(none)");
}

TEST(FunctionSchema, BuiltByHandPrintsAndParses) {
  FunctionSchema s;
  s.ns = "myops";
  s.name = "scale_";
  s.arguments.push_back(Argument{"x", SchemaType::tensor(), std::nullopt, false,
                                 AliasInfo{{"a"}, {"a"}, true}, std::nullopt});
  s.arguments.push_back(Argument{"factor", SchemaType(SchemaType::Kind::Float),
                                 DefaultValue{IValue(2.0), "2.0"}, true, std::nullopt,
                                 std::nullopt});
  s.returns.push_back(Return{"", SchemaType::tensor(), AliasInfo{{"a"}, {"a"}, true}, {}});
  EXPECT_EQ(s.to_string(), "myops::scale_(Tensor(a!) x, *, float factor=2.0) -> Tensor(a!)");
  EXPECT_EQ(parse_schema(s.to_string()), s);
}

}  // namespace
}  // namespace symmflow
