#include "symmflow/library/symm_mem_args.h"

#include <gtest/gtest.h>

#include "symmflow/library/library.h"
#include "symmflow/library/test_util.h"

namespace symmflow {
namespace {

// The symm_mem ops of seed 001/003, in a test namespace.
void define_symm_ops(Library& lib) {
  lib.def("multimem_all_reduce_(Tensor(a!) input, str reduce_op, str group_name) -> Tensor(a!)");
  lib.def("one_shot_all_reduce(Tensor input, str reduce_op, str group_name) -> Tensor");
  lib.def("one_shot_all_reduce_out(Tensor input, str reduce_op, str group_name, Tensor(a!) out) "
          "-> Tensor(a!)");
  lib.def("multimem_all_gather_out(Tensor input, str group_name, Tensor(a!) out) -> Tensor(a!)");
  lib.def("coalesced_(Tensor[](a!) inputs, Tensor?[] extra, Tensor? maybe, str group_name) -> ()");
  lib.def("ov.a(Tensor x, Tensor y) -> Tensor");
  lib.def("ov.b(Tensor x, int y) -> Tensor");
}

TEST(SymmMemArgs, RegisterAndQuery) {
  Library lib(Library::Kind::DEF, "sftest_symm");
  define_symm_ops(lib);
  lib.register_symm_mem_args("multimem_all_reduce_", {"input"});
  lib.register_symm_mem_args("sftest_symm::multimem_all_gather_out", {"out"});
  lib.register_symm_mem_args("coalesced_", {"inputs", "extra", "maybe"});
  EXPECT_TRUE(requires_symmetric_memory("sftest_symm::multimem_all_reduce_", "input"));
  EXPECT_FALSE(requires_symmetric_memory("sftest_symm::multimem_all_reduce_", "group_name"));
  EXPECT_TRUE(requires_symmetric_memory("sftest_symm::multimem_all_gather_out", "out"));
  EXPECT_FALSE(requires_symmetric_memory("sftest_symm::multimem_all_gather_out", "input"));
  EXPECT_FALSE(requires_symmetric_memory("sftest_symm::one_shot_all_reduce", "input"));
  EXPECT_EQ(symm_mem_args("sftest_symm::coalesced_"),
            (std::vector<std::string>{"inputs", "extra", "maybe"}));
  const Operator& op = Dispatcher::instance().get("sftest_symm::multimem_all_reduce_");
  EXPECT_EQ(symm_mem_args(op), (std::vector<std::string>{"input"}));
  EXPECT_TRUE(symm_mem_args("sftest_symm::one_shot_all_reduce").empty());
}

// RFC seeds/004, option 1: the type itself says "symmetric".
TEST(SymmMemArgs, SymmMemTensorTypeDeclaresTheArgument) {
  Library lib(Library::Kind::DEF, "sftest_symm_type");
  lib.def("my_collective(SymmMemTensor x) -> Tensor");
  lib.def("my_list_collective(SymmMemTensor[] xs, Tensor y) -> ()");
  EXPECT_TRUE(requires_symmetric_memory("sftest_symm_type::my_collective", "x"));
  EXPECT_EQ(symm_mem_args("sftest_symm_type::my_list_collective"), (std::vector<std::string>{"xs"}));
  const auto& s = Dispatcher::instance().get("sftest_symm_type::my_collective").schema();
  EXPECT_EQ(s.to_string(), "sftest_symm_type::my_collective(SymmMemTensor x) -> Tensor");
  // It binds like a Tensor.
  auto bound = Dispatcher::instance().bind(s, std::vector<IValue>{Tensor::meta({2}, DType::f32)}, {});
  EXPECT_TRUE(bound[0].is_tensor());
  EXPECT_THROW(Dispatcher::instance().bind(s, std::vector<IValue>{IValue(3)}, {}), Error);
  // Declaring it again by name is a duplicate registration.
  EXPECT_THROW(lib.register_symm_mem_args("my_collective", {"x"}), Error);
}

TEST(SymmMemArgs, QualifiedNameCoversEveryOverload) {
  Library lib(Library::Kind::DEF, "sftest_symm_ov");
  define_symm_ops(lib);
  {
    RegistrationHandle h = register_symm_mem_args("sftest_symm_ov::ov", {"x"});
    EXPECT_TRUE(requires_symmetric_memory("sftest_symm_ov::ov.a", "x"));
    EXPECT_TRUE(requires_symmetric_memory("sftest_symm_ov::ov.b", "x"));
  }
  EXPECT_FALSE(requires_symmetric_memory("sftest_symm_ov::ov.a", "x"));
  // `y` is a Tensor in ov.a but an int in ov.b: the whole registration fails,
  // and registers nothing.
  expect_error([] { register_symm_mem_args("sftest_symm_ov::ov", {"y"}); },
               "argument 'y' of sftest_symm_ov::ov.b has type int");
  EXPECT_FALSE(requires_symmetric_memory("sftest_symm_ov::ov.a", "y"));
  register_symm_mem_args("sftest_symm_ov::ov.a", {"y"}).release();  // one overload by full name
  EXPECT_TRUE(requires_symmetric_memory("sftest_symm_ov::ov.a", "y"));
}

TEST(SymmMemArgs, ValidationErrors) {
  Library lib(Library::Kind::DEF, "sftest_symm_err");
  define_symm_ops(lib);
  expect_error([&] { lib.register_symm_mem_args("nope", {"x"}); },
               "register_symm_mem_args(sftest_symm_err::nope): unknown operator "
               "'sftest_symm_err::nope'");
  expect_error([&] { lib.register_symm_mem_args("one_shot_all_reduce", {"inp"}); },
               "register_symm_mem_args(sftest_symm_err::one_shot_all_reduce): operator "
               "sftest_symm_err::one_shot_all_reduce has no argument 'inp'; its arguments are: "
               "input, reduce_op, group_name");
  expect_error([&] { lib.register_symm_mem_args("one_shot_all_reduce", {"group_name"}); },
               "argument 'group_name' of sftest_symm_err::one_shot_all_reduce has type str; only "
               "Tensor, Tensor?, Tensor[] and Tensor?[] arguments can require symmetric memory");
  expect_error([&] { lib.register_symm_mem_args("one_shot_all_reduce", {}); },
               "register_symm_mem_args(sftest_symm_err::one_shot_all_reduce): expected at least "
               "one argument name, got an empty list");
  expect_error([&] { lib.register_symm_mem_args("one_shot_all_reduce_out", {"out", "input", "out"}); },
               "register_symm_mem_args(sftest_symm_err::one_shot_all_reduce_out): argument 'out' "
               "is listed twice");
  lib.register_symm_mem_args("one_shot_all_reduce", {"input"});
  expect_error([&] { lib.register_symm_mem_args("one_shot_all_reduce", {"input"}); },
               "operator sftest_symm_err::one_shot_all_reduce already has symmetric-memory "
               "arguments registered (input)");
  expect_error([&] { lib.register_symm_mem_args("other::one_shot_all_reduce", {"input"}); },
               "names namespace 'other', but this library is for namespace 'sftest_symm_err'");
  expect_error([] { requires_symmetric_memory("sftest_symm_err::nope", "x"); },
               "unknown operator 'sftest_symm_err::nope'");
  expect_error([] { requires_symmetric_memory("sftest_symm_err::one_shot_all_reduce", "inp"); },
               "requires_symmetric_memory(sftest_symm_err::one_shot_all_reduce, inp): the op has "
               "no argument 'inp'; its arguments are: input, reduce_op, group_name");
}

TEST(SymmMemArgs, HandleAndDefRemovalClearTheRegistration) {
  auto lib = std::make_unique<Library>(Library::Kind::DEF, "sftest_symm_life");
  lib->def("f(Tensor x) -> Tensor");
  RegistrationHandle h = register_symm_mem_args("sftest_symm_life::f", {"x"});
  EXPECT_TRUE(requires_symmetric_memory("sftest_symm_life::f", "x"));
  h.reset();
  EXPECT_FALSE(requires_symmetric_memory("sftest_symm_life::f", "x"));
  h = register_symm_mem_args("sftest_symm_life::f", {"x"});  // free again after removal
  lib.reset();  // the def goes, and the declaration with it
  Library again(Library::Kind::DEF, "sftest_symm_life");
  again.def("f(Tensor x) -> Tensor");
  EXPECT_FALSE(requires_symmetric_memory("sftest_symm_life::f", "x"));
  h.reset();  // removing a stale declaration is a no-op
  again.register_symm_mem_args("f", {"x"});
  EXPECT_TRUE(requires_symmetric_memory("sftest_symm_life::f", "x"));
}

}  // namespace
}  // namespace symmflow
