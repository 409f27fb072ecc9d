#include "symmflow/library/bind.h"

#include <gtest/gtest.h>

#include "symmflow/library/library.h"
#include "symmflow/library/test_util.h"

namespace symmflow {
namespace {

FunctionSchema schema(const char* s) { return parse_schema(s); }

const FunctionSchema kAdd =
    schema("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
const FunctionSchema kSum = schema(
    "aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? "
    "dtype=None) -> Tensor");

TEST(Bind, PositionalKwargsAndDefaults) {
  Tensor a = Tensor::empty({2}), b = Tensor::empty({2});
  auto args = bind_arguments(kAdd, std::vector<IValue>{a, b});
  ASSERT_EQ(args.size(), 3u);
  EXPECT_TRUE(args[0].to_tensor().is_same(a));
  EXPECT_EQ(args[2].to_int(), 1);  // default alpha
  args = bind_arguments(kAdd, std::vector<IValue>{a}, {{"other", b}, {"alpha", 2.5}});
  EXPECT_TRUE(args[1].to_tensor().is_same(b));
  EXPECT_DOUBLE_EQ(args[2].to_double(), 2.5);

  args = bind_arguments(kSum, std::vector<IValue>{a, IValue()}, {{"dtype", DType::f64}});
  EXPECT_TRUE(args[1].is_none());
  EXPECT_FALSE(args[2].to_bool());
  EXPECT_EQ(args[3].to_dtype(), DType::f64);
  args = bind_arguments(kSum, std::vector<IValue>{a, std::vector<int64_t>{0}, true});
  EXPECT_EQ(args[1].to_int_list(), (std::vector<int64_t>{0}));
}

TEST(Bind, Conversions) {
  auto s = schema(
      "t::f(Scalar s, float f, int[2] stride, SymInt[2] pad=0, Tensor?[] idx, Tensor[] ts, "
      "float[] fs, str? mode=None, MemoryFormat mf=contiguous_format, Any any=None) -> ()");
  Tensor t = Tensor::empty({1});
  auto args = bind_arguments(
      s, std::vector<IValue>{true, int64_t(3), int64_t(4), int64_t(5),
                             IValue(IValueList{t, IValue()}), std::vector<Tensor>{t, t},
                             IValue(IValueList{1, 2.5})});
  EXPECT_TRUE(args[0].to_bool());                                   // Scalar takes a bool
  EXPECT_DOUBLE_EQ(args[1].to_double(), 3.0);                       // float takes an int
  EXPECT_EQ(args[2].to_int_list(), (std::vector<int64_t>{4, 4}));   // int[2] takes an int
  EXPECT_EQ(args[3].to_int_list(), (std::vector<int64_t>{5, 5}));
  EXPECT_EQ(args[4].to_optional_tensor_list().size(), 2u);
  EXPECT_EQ(args[6].to_double_list(), (std::vector<double>{1.0, 2.5}));
  EXPECT_TRUE(args[7].is_none());
  EXPECT_EQ(args[8].to_string(), "contiguous_format");
  // The default of `SymInt[2] pad=0` is converted like a passed value.
  args = bind_arguments(s, std::vector<IValue>{1, 1.0, std::vector<int64_t>{1, 2}},
                        {{"idx", IValue(IValueList{})}, {"ts", IValue(IValueList{})},
                         {"fs", IValue(IValueList{})}});
  EXPECT_EQ(args[3].to_int_list(), (std::vector<int64_t>{0, 0}));
}

TEST(Bind, Errors) {
  Tensor a = Tensor::empty({2});
  expect_error([&] { bind_arguments(kAdd, std::vector<IValue>{a}); },
               "aten::add.Tensor: missing required argument 'other' (Tensor other); schema: "
               "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  expect_error([&] { bind_arguments(kAdd, std::vector<IValue>{a, a}, {{"beta", 1}}); },
               "aten::add.Tensor: unknown keyword argument 'beta'; arguments are: self, other, alpha");
  expect_error([&] { bind_arguments(kAdd, std::vector<IValue>{a, a, 2}); },
               "aten::add.Tensor: argument 'alpha' is keyword-only and cannot be passed "
               "positionally (got 3 positional arguments, the schema takes 2)");
  expect_error([&] { bind_arguments(schema("t::g(Tensor x) -> ()"), std::vector<IValue>{a, a}); },
               "t::g: too many positional arguments: expected at most 1 (x), got 2");
  expect_error([&] { bind_arguments(kAdd, std::vector<IValue>{a, a}, {{"self", a}}); },
               "aten::add.Tensor: argument 'self' given both positionally and as a keyword");
  expect_error([&] { bind_arguments(kAdd, std::vector<IValue>{a, "x"}); },
               "aten::add.Tensor: argument 'other' expected Tensor but found str \"x\"");
  expect_error([&] { bind_arguments(kAdd, std::vector<IValue>{a, a}, {{"alpha", "x"}}); },
               "argument 'alpha' expected Scalar but found str");
  expect_error([&] { bind_arguments(kSum, std::vector<IValue>{a, 1.5}); },
               "argument 'dim' expected int[1]? but found float 1.5");
  expect_error([&] { bind_arguments(kSum, std::vector<IValue>{a, IValue(IValueList{1, "x"})}); },
               "argument 'dim' expected int[1]? but found list");
  expect_error([&] { bind_arguments(kSum, std::vector<IValue>{IValue(), IValue()}); },
               "argument 'self' expected Tensor but found None");
  expect_error([&] { bind_arguments(schema("t::h(int x) -> ()"), std::vector<IValue>{true}); },
               "argument 'x' expected int but found bool");
  expect_error([&] { bind_arguments(schema("t::h(int[] x) -> ()"), std::vector<IValue>{1}); },
               "argument 'x' expected int[] but found int");  // only int[N] repeats an int
}

TEST(Bind, Varargs) {
  auto s = schema("aten::format(str self, ...) -> str");
  auto args = bind_arguments(s, std::vector<IValue>{"{} {}", 1, 2});
  EXPECT_EQ(args.size(), 3u);
}

std::vector<IValue> returns_name(std::string name) {
  return {IValue(std::move(name))};
}

TEST(Resolve, PicksTheOverloadThatBinds) {
  Library lib(Library::Kind::DEF, "sftest_res");
  lib.def("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> str",
          [](OpContext&, std::span<const IValue>) { return returns_name("Tensor"); });
  lib.def("add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> str",
          [](OpContext&, std::span<const IValue>) { return returns_name("Scalar"); });
  lib.def("add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)");
  auto& d = Dispatcher::instance();
  Tensor a = Tensor::empty({1});
  EXPECT_EQ(d.resolve("sftest_res::add", {a, a}).first->full_name(), "sftest_res::add.Tensor");
  EXPECT_EQ(d.resolve("sftest_res::add", {a, 2}).first->full_name(), "sftest_res::add.Scalar");
  EXPECT_EQ(d.resolve("sftest_res::add", {a, 2.0}, {{"alpha", 3}}).first->full_name(),
            "sftest_res::add.Scalar");
  EXPECT_EQ(d.resolve("sftest_res::add", {a, a}, {{"out", a}}).first->full_name(),
            "sftest_res::add.out");
  // A full name skips the choice.
  auto [op, args] = d.resolve("sftest_res::add.Scalar", {a, 1});
  OpContext ctx;
  EXPECT_EQ(op->call(ctx, args)[0].to_string(), "Scalar");
  EXPECT_EQ(d.call("sftest_res::add", ctx, {a, a})[0].to_string(), "Tensor");

  expect_error([&] { d.resolve("sftest_res::add", {a, "x"}); },
               "no overload of sftest_res::add accepts the arguments (Tensor, str); candidates:\n"
               "  sftest_res::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> str\n"
               "    -> sftest_res::add.Scalar: argument 'other' expected Scalar but found str");
  expect_error([&] { d.resolve("sftest_res::sub", {a}); }, "unknown operator 'sftest_res::sub'");
}

TEST(Resolve, PrefersExactKindsAndReportsAmbiguity) {
  Library lib(Library::Kind::DEF, "sftest_amb");
  lib.def("f.int(int x) -> ()");
  lib.def("f.Scalar(Scalar x) -> ()");
  lib.def("g.a(int x) -> ()");
  lib.def("g.b(SymInt x) -> ()");
  lib.def("h(Tensor x, *, int n) -> ()");
  auto& d = Dispatcher::instance();
  EXPECT_EQ(d.resolve("sftest_amb::f", {1}).first->full_name(), "sftest_amb::f.int");
  EXPECT_EQ(d.resolve("sftest_amb::f", {1.0}).first->full_name(), "sftest_amb::f.Scalar");
  expect_error([&] { d.resolve("sftest_amb::g", {1}); },
               "ambiguous call to sftest_amb::g with arguments (int): these overloads match "
               "equally well:\n  sftest_amb::g.a(int x) -> ()\n  sftest_amb::g.b(SymInt x) -> ()");
  // With a single overload its own binding error is the message.
  expect_error([&] { d.resolve("sftest_amb::h", {Tensor::empty({1})}); },
               "sftest_amb::h: missing required argument 'n'");
}

// resolve remembers a name's overloads; a def or an undef of one of them is seen
// by the next call.
TEST(Resolve, SeesOverloadsDefinedOrRemovedAfterAnEarlierCall) {
  Library lib(Library::Kind::DEF, "sftest_cache");
  lib.def("f.int(int x) -> ()");
  auto& d = Dispatcher::instance();
  EXPECT_EQ(d.resolve("sftest_cache::f", {1}).first->full_name(), "sftest_cache::f.int");
  expect_error([&] { d.resolve("sftest_cache::f", {"x"}); }, "argument 'x' expected int but found str");
  {
    Library more(Library::Kind::FRAGMENT, "sftest_cache");
    more.def("f.str(str x) -> ()");
    EXPECT_EQ(d.resolve("sftest_cache::f", {"x"}).first->full_name(), "sftest_cache::f.str");
  }
  expect_error([&] { d.resolve("sftest_cache::f", {"x"}); }, "argument 'x' expected int but found str");
  EXPECT_EQ(d.resolve("sftest_cache::f", {1}).first->full_name(), "sftest_cache::f.int");
}

}  // namespace
}  // namespace symmflow
