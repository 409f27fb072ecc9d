// Def-use lists (Value::uses, Value::returned): every mutation API of Graph
// keeps them equal to what the arguments say. Each test mutates through one API
// and compares the lists with a recount from scratch (and runs the verifier,
// which recounts independently); a mutation that forgot a list fails both.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "symmflow/ir/parser.h"
#include "symmflow/ir/verifier.h"
#include "symmflow/library/dispatcher.h"

namespace symmflow::ir {
namespace {

constexpr const char* kProgram = R"(
graph @f(%x: f32[8], %y: f32[8]) -> (f32[8], f32[8]) {
  %a = aten::add(%x, %y)
  %b = aten::mul(%a, %a)
  %l = aten::cat([%a, %b, %x])
  %c = aten::add(%b, %x)
  return %c, %a
}
)";

using UseList = std::vector<std::pair<const Node*, uint32_t>>;

// The uses every value should list, recounted from the arguments of the nodes in
// program order.
std::map<const Value*, UseList> recount(const Graph& g) {
  std::map<const Value*, UseList> out;
  for (const Node* n : g.nodes()) {
    uint32_t k = 0;
    for (const auto& a : n->args()) a.for_each_value([&](Value* v) { out[v].emplace_back(n, k++); });
  }
  for (auto& [v, l] : out) std::sort(l.begin(), l.end());
  return out;
}

UseList listed(const Value* v) {
  UseList l;
  for (const Use& u : v->uses()) l.emplace_back(u.user, u.operand);
  std::sort(l.begin(), l.end());
  return l;
}

// Every value's list equals the recount, its returned() the outputs' count, and
// the verifier agrees.
void expect_consistent(const Graph& g, const std::string& after) {
  auto want = recount(g);
  for (size_t i = 0; i < g.num_values(); ++i) {
    const Value* v = g.value(i);
    EXPECT_EQ(listed(v), want[v]) << "uses of %" << v->name() << " after " << after;
    EXPECT_EQ(v->returned(), std::count(g.outputs().begin(), g.outputs().end(), v))
        << "returned count of %" << v->name() << " after " << after;
  }
  EXPECT_NO_THROW(verify(g, after)) << after;
}

std::unique_ptr<Graph> program() { return parse_graph(kProgram, {"uses.sf", 0, 1}); }
Node* producer(Graph& g, const char* name) { return g.find_value(name)->producer(); }

TEST(DefUse, ParsedProgramListsEveryOperandOnce) {
  auto g = program();
  expect_consistent(*g, "parse");
  // %a: add's operands 0 and 1 of mul, operand 0 of cat; returned once.
  const Value* a = g->find_value("a");
  EXPECT_EQ(a->uses().size(), 3u);
  EXPECT_EQ(a->returned(), 1);
  EXPECT_EQ(g->find_value("x")->uses().size(), 3u);  // add, cat, add
  EXPECT_TRUE(g->find_value("l")->uses().empty());
}

TEST(DefUse, ReplaceUsesMovesEveryUseAndTheReturnedValue) {
  auto g = program();
  Value* a = g->find_value("a");
  Value* y = g->find_value("y");
  EXPECT_EQ(g->replace_uses(a, y), 4u);  // mul twice, cat, the return
  EXPECT_TRUE(a->uses().empty());
  EXPECT_EQ(a->returned(), 0);
  EXPECT_EQ(y->uses().size(), 4u);  // add, mul twice, cat
  EXPECT_EQ(y->returned(), 1);
  expect_consistent(*g, "replace_uses");
}

TEST(DefUse, ReplaceUsesWhereKeepsTheUsesItSkips) {
  auto g = program();
  Value* a = g->find_value("a");
  Value* x = g->find_value("x");
  Node* mul = producer(*g, "b");
  // The filter picks nodes; the returned value is replaced either way.
  EXPECT_EQ(g->replace_uses(a, x, [&](const Node* n) { return n == mul; }), 3u);
  EXPECT_EQ(listed(a), (UseList{{producer(*g, "l"), 0}}));
  EXPECT_EQ(a->returned(), 0);
  EXPECT_EQ(x->returned(), 1);
  expect_consistent(*g, "replace_uses(where)");
}

TEST(DefUse, ArgumentEditsUnhookTheOldValueAndHookTheNew) {
  auto g = program();
  Value* x = g->find_value("x");
  Value* y = g->find_value("y");
  Node* mul = producer(*g, "b");
  g->set_arg(mul, 1, Arg(x));  // mul(%a, %x)
  expect_consistent(*g, "set_arg");
  EXPECT_EQ(g->find_value("a")->uses().size(), 2u);
  Node* cat = producer(*g, "l");
  g->set_value_at(cat, WriteSlot{0, 2}, y);  // cat([%a, %b, %y])
  expect_consistent(*g, "set_value_at");
  EXPECT_EQ(cat->arg(0).elems[2].value, y);
  g->map_operands(cat, [&](Value* v) { return v == g->find_value("b") ? x : v; });  // cat([%a, %x, %y])
  expect_consistent(*g, "map_operands");
  EXPECT_TRUE(g->find_value("b")->uses().size() == 1u);  // only the last add
}

TEST(DefUse, RemovalInsertionAndReorderingHookOnlyNodesInProgramOrder) {
  auto g = program();
  Node* cat = producer(*g, "l");
  g->remove(cat);
  expect_consistent(*g, "remove");
  EXPECT_EQ(g->find_value("x")->uses().size(), 2u);
  // A made node is not a use until it is in program order; edits before that
  // only edit.
  Node* neg = g->make_node(Dispatcher::instance().get("aten::neg"), {Arg(g->find_value("x"))}, false);
  g->set_arg(neg, 0, Arg(g->find_value("y")));
  expect_consistent(*g, "make_node");
  EXPECT_EQ(g->find_value("y")->uses().size(), 1u);
  g->insert_before(producer(*g, "c"), neg);
  expect_consistent(*g, "insert_before");
  EXPECT_EQ(g->find_value("y")->uses().size(), 2u);
  // set_order drops neg and adds the removed cat back.
  std::vector<Node*> order;
  for (Node* n : g->nodes())
    if (n != neg) order.push_back(n);
  order.insert(order.begin() + 2, cat);
  g->set_order(order);
  expect_consistent(*g, "set_order");
  EXPECT_EQ(g->find_value("y")->uses().size(), 1u);
  EXPECT_EQ(g->find_value("x")->uses().size(), 3u);
  Node* c = producer(*g, "c");
  g->append(g->make_node(Dispatcher::instance().get("aten::neg"), {Arg(c->output(0))}, false));
  expect_consistent(*g, "append");
}

TEST(DefUse, SetOutputsCountsReturnsAndCloneRebuildsTheLists) {
  auto g = program();
  Value* b = g->find_value("b");
  g->set_outputs({b, b});
  EXPECT_EQ(b->returned(), 2);
  EXPECT_EQ(g->find_value("a")->returned(), 0);
  expect_consistent(*g, "set_outputs");
  auto c = g->clone();
  expect_consistent(*c, "clone");
  EXPECT_EQ(c->find_value("a")->uses().size(), 3u);
  EXPECT_EQ(c->find_value("b")->returned(), 2);
  for (const Use& u : c->find_value("a")->uses())
    EXPECT_TRUE(std::find(c->nodes().begin(), c->nodes().end(), u.user) != c->nodes().end());
}

TEST(DefUse, SetOrderRejectsANodeTwice) {
  auto g = program();
  std::vector<Node*> order = g->nodes();
  order.push_back(order[0]);
  EXPECT_THROW(g->set_order(order), Error);
}

}  // namespace
}  // namespace symmflow::ir
