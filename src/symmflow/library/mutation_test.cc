// Mutation: from the schema's alias annotations by default, from a resolver for
// ops whose writes depend on their arguments.
#include <gtest/gtest.h>

#include "symmflow/library/library.h"
#include "symmflow/library/test_util.h"

namespace symmflow {
namespace {

TEST(Mutation, DefaultsToSchemaAliases) {
  Library lib(Library::Kind::DEF, "sftest_mut");
  lib.def("inplace_(Tensor(a!) x, Tensor y) -> Tensor(a!)");
  lib.def("out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)");
  lib.def("lists_(Tensor[](a!) xs, Tensor(b!)[] ys, Tensor[] zs) -> ()");
  lib.def("pure(Tensor x) -> Tensor");
  auto& d = Dispatcher::instance();
  Tensor t = Tensor::empty({1});
  auto slots = [&](const char* name, std::vector<IValue> args) {
    return d.get(name).mutated_slots(args);
  };
  EXPECT_EQ(slots("sftest_mut::inplace_", {t, t}), (std::vector<MutatedSlot>{{0, -1}}));
  EXPECT_EQ(slots("sftest_mut::out", {t, t}), (std::vector<MutatedSlot>{{1, -1}}));
  IValue list(std::vector<Tensor>{t, t});
  EXPECT_EQ(slots("sftest_mut::lists_", {list, list, list}),
            (std::vector<MutatedSlot>{{0, -1}, {1, -1}}));
  EXPECT_TRUE(slots("sftest_mut::pure", {t}).empty());
  EXPECT_FALSE(d.get("sftest_mut::pure").has_mutation_resolver());
}

// c10d::batch_isend_irecv-like: only the irecv entries of `tensors` are written.
std::vector<MutatedSlot> irecv_entries(std::span<const IValue> args) {
  std::vector<MutatedSlot> out;
  auto ops = args[0].to_string_list();
  for (size_t i = 0; i < ops.size(); ++i)
    if (ops[i] == "irecv") out.push_back({1, int64_t(i)});
  return out;
}

TEST(Mutation, ResolverOverridesTheSchema) {
  Library lib(Library::Kind::DEF, "sftest_mut_res");
  lib.def("batch_isend_irecv(str[] ops, Tensor(a!)[] tensors, int[] peers, int[] tags, str "
          "group_name) -> ()");
  Operator& op = Dispatcher::instance().get("sftest_mut_res::batch_isend_irecv");
  Tensor t = Tensor::empty({1});
  std::vector<IValue> args = Dispatcher::instance().bind(
      op.schema(), {std::vector<std::string>{"isend", "irecv", "isend", "irecv"},
                    std::vector<Tensor>{t, t, t, t}, std::vector<int64_t>{1, 1, 2, 2},
                    std::vector<int64_t>{0, 0, 0, 0}, "world"});
  EXPECT_EQ(op.mutated_slots(args), (std::vector<MutatedSlot>{{1, -1}}));  // schema: whole list
  {
    Library frag(Library::Kind::FRAGMENT, "sftest_mut_res");
    frag.set_mutation_resolver("batch_isend_irecv", irecv_entries);
    EXPECT_TRUE(op.has_mutation_resolver());
    EXPECT_EQ(op.mutated_slots(args), (std::vector<MutatedSlot>{{1, 1}, {1, 3}}));
    expect_error([&] { frag.set_mutation_resolver("batch_isend_irecv", irecv_entries); },
                 "operator sftest_mut_res::batch_isend_irecv already has a mutation resolver");
  }
  EXPECT_FALSE(op.has_mutation_resolver());  // went with its library
  EXPECT_EQ(op.mutated_slots(args), (std::vector<MutatedSlot>{{1, -1}}));
}

}  // namespace
}  // namespace symmflow
