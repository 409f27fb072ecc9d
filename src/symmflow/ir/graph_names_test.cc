// Value names: results nobody named get `%_N`, kept by number outside the name
// table (graph.h's generated_); names the program or a pass gives live in the
// table. Either way find_value finds them, no two values share a name, and a
// given name wins over a generated one, which moves aside.
#include <gtest/gtest.h>

#include <set>

#include "symmflow/ir/graph.h"
#include "symmflow/ir/parser.h"
#include "symmflow/ir/printer.h"
#include "symmflow/ir/verifier.h"

namespace symmflow::ir {
namespace {

TensorType f32(int64_t n) { return TensorType{DType::f32, {n}}; }

Value* add(Graph& g, Value* a, Value* b, std::string name = "") {
  std::vector<std::string> names;
  if (!name.empty()) names.push_back(std::move(name));
  return g.append_call("aten::add", {{Arg(a), Arg(b)}, {}}, {}, false, std::move(names))->output(0);
}

TEST(ValueNames, GeneratedNamesAreFoundByName) {
  Graph g("f", 0, 1);
  Value* x = g.add_input("x", f32(4));
  Value* a = add(g, x, x);
  Value* b = add(g, a, x);
  EXPECT_EQ(a->name(), "_0");
  EXPECT_EQ(b->name(), "_1");
  EXPECT_EQ(g.find_value("_0"), a);
  EXPECT_EQ(g.find_value("_1"), b);
  EXPECT_EQ(g.find_value("x"), x);
  EXPECT_EQ(g.find_value("_2"), nullptr);
  EXPECT_EQ(g.find_value("_01"), nullptr);  // not the form fresh naming writes
}

TEST(ValueNames, AGivenNameTakesAGeneratedOnesPlaceAndTheGeneratedOneMovesAside) {
  Graph g("f", 0, 1);
  Value* x = g.add_input("x", f32(4));
  Value* gen = add(g, x, x);  // %_0
  Value* given = add(g, gen, x, "_0");
  EXPECT_EQ(given->name(), "_0");
  EXPECT_NE(gen->name(), "_0");
  EXPECT_EQ(g.find_value("_0"), given);
  EXPECT_EQ(g.find_value(gen->name()), gen);
  // The next generated name skips the given `_N` names.
  Value* c = add(g, given, x, "_3");
  Value* d = add(g, c, x);
  Value* e = add(g, d, x);
  std::set<std::string> names;
  for (Value* v : {x, gen, given, c, d, e}) names.insert(v->name());
  EXPECT_EQ(names.size(), 6u) << "two values share a name";
  EXPECT_EQ(g.find_value(d->name()), d);
  EXPECT_EQ(g.find_value(e->name()), e);
}

TEST(ValueNames, AGivenNameTwiceIsAnError) {
  Graph g("f", 0, 1);
  Value* x = g.add_input("x", f32(4));
  add(g, x, x, "y");
  EXPECT_THROW(add(g, x, x, "y"), Error);
}

TEST(ValueNames, ANamedVersionLeavesTheGeneratedTable) {
  Graph g("f", 0, 1);
  Value* x = g.add_input("x", f32(4));
  Value* y = add(g, x, x, "y");
  Value* gen = add(g, y, x);
  const std::string old = gen->name();
  g.name_after(gen, y);
  EXPECT_EQ(gen->name(), "y.1");
  EXPECT_EQ(g.find_value("y.1"), gen);
  EXPECT_EQ(g.find_value(old), nullptr);
}

TEST(ValueNames, APrintedGraphWithGeneratedNamesParsesBackAndGrows) {
  Graph g("f", 0, 1);
  Value* x = g.add_input("x", f32(4));
  Value* a = add(g, x, x);
  Value* b = add(g, a, x);
  g.set_outputs({b});
  g.set_output_types({b->type()});
  auto parsed = parse_graph(print_graph(g));
  Graph& p = *parsed;
  verify(p);
  ASSERT_NE(p.find_value("_0"), nullptr);
  ASSERT_NE(p.find_value("_1"), nullptr);
  // New results of the parsed graph get names none of the parsed ones has.
  Value* c = add(p, p.find_value("_1"), p.find_value("x"));
  EXPECT_NE(c->name(), "_0");
  EXPECT_NE(c->name(), "_1");
  EXPECT_EQ(p.find_value(c->name()), c);
}

}  // namespace
}  // namespace symmflow::ir
