#include "symmflow/library/library.h"

#include <gtest/gtest.h>

#include <thread>

#include "symmflow/library/test_util.h"

namespace symmflow {
namespace {

// --- static registration through the macros, at namespace scope -------------

std::vector<IValue> scale_cpu(OpContext&, std::span<const IValue> args) {
  Tensor x = args[0].to_tensor();
  float f = float(args[1].to_double());
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] *= f;
  return {x};
}

std::vector<IValue> scale_meta(OpContext&, std::span<const IValue> args) {
  const Tensor& x = args[0].to_tensor();
  return {Tensor::meta(x.sizes(), x.dtype())};
}

}  // namespace
}  // namespace symmflow

SYMMFLOW_LIBRARY(sftest_macro, m) {
  m.def("scale_(Tensor(a!) x, float factor=2.0) -> Tensor(a!)", symmflow::scale_cpu);
  m.register_symm_mem_args("scale_", {"x"});
}
SYMMFLOW_LIBRARY_FRAGMENT(sftest_macro, m) { m.def("noop(Tensor x) -> ()"); }
SYMMFLOW_LIBRARY_FRAGMENT(sftest_macro, m) { m.def("sftest_macro::noop.two(Tensor x, int y) -> ()"); }
SYMMFLOW_LIBRARY_IMPL(sftest_macro, Meta, m) { m.impl("scale_", symmflow::scale_meta); }

namespace symmflow {
namespace {

TEST(LibraryMacros, RegisterAtStaticInit) {
  Operator* op = Dispatcher::instance().find("sftest_macro::scale_");
  ASSERT_NE(op, nullptr);
  EXPECT_TRUE(op->has_kernel(DispatchKey::CPU));
  EXPECT_TRUE(op->has_kernel(DispatchKey::Meta));
  EXPECT_EQ(op->symm_mem_args(), (std::vector<std::string>{"x"}));
  EXPECT_EQ(Dispatcher::instance().overloads("sftest_macro::noop").size(), 2u);

  Tensor x = Tensor::empty({3}, DType::f32);
  for (int i = 0; i < 3; ++i) x.data<float>()[i] = float(i);
  auto args = Dispatcher::instance().bind(op->schema(), {IValue(x)});
  OpContext cpu(DispatchKey::CPU);
  auto out = op->call(cpu, args);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].to_tensor().is_same(x));  // the aliased return is the input
  EXPECT_EQ(x.data<float>()[2], 4.0f);          // factor defaulted to 2.0

  OpContext meta(DispatchKey::Meta);
  auto m = op->call(meta, args);
  EXPECT_TRUE(m[0].to_tensor().is_meta());
  EXPECT_EQ(m[0].to_tensor().sizes(), (Shape{3}));
}

TEST(LibraryMacros, SecondDefLibraryForANamespaceIsAnError) {
  expect_error([] { Library again(Library::Kind::DEF, "sftest_macro", std::nullopt, "x.cc", 7); },
               "namespace 'sftest_macro' already has a SYMMFLOW_LIBRARY (by "
               "SYMMFLOW_LIBRARY(sftest_macro) at ");
  expect_error([] { Library again(Library::Kind::DEF, "sftest_macro"); },
               "use SYMMFLOW_LIBRARY_FRAGMENT(sftest_macro, m) to add ops");
}

// --- Library objects ------------------------------------------------------------

TEST(Library, DefImplAndCallThroughCpuAndMeta) {
  Library lib(Library::Kind::DEF, "sftest_lib");
  lib.def("twice(Tensor x) -> Tensor");
  lib.impl("twice", [](OpContext& ctx, std::span<const IValue> a) -> std::vector<IValue> {
    EXPECT_EQ(ctx.key(), DispatchKey::CPU);
    return {IValue(a[0].to_tensor())};
  });
  lib.impl("sftest_lib::twice", scale_meta, DispatchKey::Meta);
  Operator& op = Dispatcher::instance().get("sftest_lib::twice");
  Tensor t = Tensor::empty({2});
  OpContext ctx;
  EXPECT_TRUE(op.call(ctx, std::vector<IValue>{t})[0].to_tensor().is_same(t));
  ctx.set_key(DispatchKey::Meta);
  EXPECT_TRUE(op.call(ctx, std::vector<IValue>{t})[0].to_tensor().is_meta());
}

TEST(Library, CallErrors) {
  Library lib(Library::Kind::DEF, "sftest_callerr");
  lib.def("f(Tensor x) -> Tensor", [](OpContext&, std::span<const IValue>) {
    return std::vector<IValue>{};  // wrong: the schema has one return
  });
  Operator& op = Dispatcher::instance().get("sftest_callerr::f");
  OpContext meta(DispatchKey::Meta);
  expect_error([&] { op.call(meta, std::vector<IValue>{Tensor::empty({1})}); },
               "sftest_callerr::f: no kernel registered for dispatch key Meta (registered: CPU)");
  OpContext cpu;
  expect_error([&] { op.call(cpu, std::vector<IValue>{}); },
               "sftest_callerr::f: expected 1 bound arguments (x), got 0");
  expect_error([&] { op.call(cpu, std::vector<IValue>{Tensor::empty({1})}); },
               "sftest_callerr::f: the CPU kernel returned 0 values, but the schema declares 1 "
               "returns");
}

TEST(Library, RegistrationErrors) {
  Library lib(Library::Kind::DEF, "sftest_regerr", std::nullopt, "mine.cc", 3);
  lib.def("f(Tensor x) -> Tensor", scale_meta);
  expect_error([&] { lib.def("f(Tensor y) -> Tensor"); },
               "operator sftest_regerr::f is already defined (by SYMMFLOW_LIBRARY(sftest_regerr) "
               "at mine.cc:3): sftest_regerr::f(Tensor x) -> Tensor");
  expect_error([&] { lib.def("other::g(Tensor x) -> Tensor"); },
               "def('other::g(Tensor x) -> Tensor') names namespace 'other', but this library is "
               "for namespace 'sftest_regerr'");
  expect_error([&] { lib.impl("f", scale_meta); },
               "operator sftest_regerr::f already has a CPU kernel (by SYMMFLOW_LIBRARY("
               "sftest_regerr) at mine.cc:3)");
  expect_error([&] { lib.impl("other::f", scale_meta); },
               "impl('other::f') names namespace 'other', but this library is for namespace "
               "'sftest_regerr'");
  expect_error([&] { lib.def("g(Tensor x") ; }, "schema:1:11: expected ',' or ')' but found end");
  expect_error([&] { lib.set_mutation_resolver("nope", [](auto) { return std::vector<MutatedSlot>{}; }); },
               "unknown operator 'sftest_regerr::nope'");

  Library impl(Library::Kind::IMPL, "sftest_regerr", DispatchKey::Meta);
  expect_error([&] { impl.def("h(Tensor x) -> Tensor"); },
               "def('h(Tensor x) -> Tensor') is not allowed in an IMPL library");
  expect_error([&] { impl.impl("f", scale_meta, DispatchKey::CPU); },
               "impl('f') for dispatch key CPU in a library for key Meta");
  expect_error([] { Library bad(Library::Kind::IMPL, "sftest_regerr"); },
               "a dispatch key is required for IMPL libraries and only for them");
  expect_error([] { Library bad(Library::Kind::FRAGMENT, "a::b"); },
               "expected a namespace name like 'myops', got 'a::b'");
}

TEST(Library, ImplBeforeDefIsCallableOnceDefined) {
  Library impl(Library::Kind::IMPL, "sftest_order", DispatchKey::CPU);
  impl.impl("f", scale_meta);
  EXPECT_EQ(Dispatcher::instance().find("sftest_order::f"), nullptr);  // not defined yet
  Library def(Library::Kind::FRAGMENT, "sftest_order");
  def.def("f(Tensor x) -> Tensor");
  Operator& op = Dispatcher::instance().get("sftest_order::f");
  OpContext ctx;
  EXPECT_TRUE(op.call(ctx, std::vector<IValue>{Tensor::empty({1})})[0].to_tensor().is_meta());
}

TEST(Library, DestructionDeregistersEverything) {
  auto& d = Dispatcher::instance();
  size_t before = d.all_operators().size();
  {
    Library lib(Library::Kind::DEF, "sftest_scoped");
    lib.def("a(Tensor x) -> Tensor", scale_meta);
    lib.def("b(Tensor(a!) x) -> ()");
    lib.register_symm_mem_args("b", {"x"});
    EXPECT_EQ(d.all_operators().size(), before + 2);
  }
  EXPECT_EQ(d.all_operators().size(), before);
  EXPECT_EQ(d.find("sftest_scoped::a"), nullptr);
  // The namespace is free again, and the op names too.
  Library lib(Library::Kind::DEF, "sftest_scoped");
  lib.def("a(Tensor x, int y) -> Tensor");
  Operator& a = d.get("sftest_scoped::a");
  EXPECT_EQ(a.schema().arguments.size(), 2u);
  EXPECT_FALSE(a.has_kernel(DispatchKey::CPU));  // the old kernel went with its library
}

TEST(Library, FragmentsMayRepeat) {
  Library a(Library::Kind::FRAGMENT, "sftest_frag");
  Library b(Library::Kind::FRAGMENT, "sftest_frag");
  a.def("f(Tensor x) -> Tensor");
  b.def("g(Tensor x) -> Tensor");
  EXPECT_NE(Dispatcher::instance().find("sftest_frag::f"), nullptr);
  EXPECT_NE(Dispatcher::instance().find("sftest_frag::g"), nullptr);
  expect_error([&] { b.def("f(Tensor x) -> Tensor"); }, "operator sftest_frag::f is already defined");
}

TEST(Library, AllOperatorsSortedAndOverloads) {
  Library lib(Library::Kind::DEF, "sftest_sorted");
  lib.def("z(Tensor x) -> Tensor");
  lib.def("a.two(Tensor x, Tensor y) -> Tensor");
  lib.def("a(Tensor x) -> Tensor");
  lib.def("ab(Tensor x) -> Tensor");
  auto all = Dispatcher::instance().all_operators();
  EXPECT_TRUE(std::is_sorted(all.begin(), all.end(), [](Operator* x, Operator* y) {
    return x->full_name() < y->full_name();
  }));
  auto ovs = Dispatcher::instance().overloads("sftest_sorted::a");
  ASSERT_EQ(ovs.size(), 2u);  // not `ab`
  EXPECT_EQ(ovs[0]->full_name(), "sftest_sorted::a");
  EXPECT_EQ(ovs[1]->full_name(), "sftest_sorted::a.two");
  expect_error([] { Dispatcher::instance().get("sftest_sorted::a.three"); },
               "unknown operator 'sftest_sorted::a.three'; defined overloads of sftest_sorted::a: "
               "sftest_sorted::a, sftest_sorted::a.two");
}

TEST(RegistrationHandle, RemovalRestoresThePreviousState) {
  auto& d = Dispatcher::instance();
  RegistrationHandle def = d.def(parse_schema("sftest_handle::f(Tensor x) -> Tensor"));
  Operator* op = d.find("sftest_handle::f");
  ASSERT_NE(op, nullptr);
  {
    RegistrationHandle k = d.impl("sftest_handle::f", DispatchKey::CPU, scale_meta);
    EXPECT_TRUE(op->has_kernel(DispatchKey::CPU));
  }
  EXPECT_FALSE(op->has_kernel(DispatchKey::CPU));
  RegistrationHandle moved;
  {
    RegistrationHandle k = d.impl("sftest_handle::f", DispatchKey::CPU, scale_meta);
    moved = std::move(k);
  }
  EXPECT_TRUE(op->has_kernel(DispatchKey::CPU));  // the moved-to handle still owns it
  moved.reset();
  EXPECT_FALSE(op->has_kernel(DispatchKey::CPU));
  d.impl("sftest_handle::f", DispatchKey::Meta, scale_meta).release();
  EXPECT_TRUE(op->has_kernel(DispatchKey::Meta));  // released: kept forever
  def.reset();
  EXPECT_EQ(d.find("sftest_handle::f"), nullptr);
  // Redefining after removal works, and the Operator object is the same one.
  RegistrationHandle again = d.def(parse_schema("sftest_handle::f(Tensor x) -> Tensor"));
  EXPECT_EQ(d.find("sftest_handle::f"), op);
}

TEST(OpContext, ServicesByType) {
  struct World { int rank = 3; };
  struct Arena {};
  World w;
  OpContext ctx(DispatchKey::Meta);
  EXPECT_EQ(ctx.get<World>(), nullptr);
  ctx.set(&w);
  EXPECT_EQ(ctx.get<World>()->rank, 3);
  EXPECT_EQ(ctx.get<Arena>(), nullptr);
  ctx.set<World>(nullptr);
  EXPECT_EQ(ctx.get<World>(), nullptr);
  EXPECT_EQ(ctx.key(), DispatchKey::Meta);
}

}  // namespace
}  // namespace symmflow

namespace symmflow {
namespace {

void bad_body(Library& m) { m.def("oops(Tensor x -> ()"); }

TEST(LibraryMacros, StaticInitErrorsGoToTheLoaderWhileAPluginLoads) {
  // What load_library does around dlopen: errors are collected, not fatal.
  std::vector<std::string> errors;
  detail::set_static_init_error_sink(&errors);
  detail::StaticLibraryInit init(Library::Kind::FRAGMENT, "sftest_badplugin", std::nullopt,
                                 &bad_body, "bad.cc", 9);
  detail::set_static_init_error_sink(nullptr);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0],
            "in SYMMFLOW_LIBRARY_FRAGMENT(sftest_badplugin) at bad.cc:9: schema:1:15: expected "
            "',' or ')' but found '->'\noops(Tensor x -> ()\n              ^");
  delete init.library;  // a static one lives forever; this test's must not leak
}

TEST(Dispatcher, ConcurrentRegistrationAndLookup) {
  constexpr int kThreads = 4, kOps = 50;
  std::vector<std::thread> threads;
  std::vector<std::unique_ptr<Library>> libs(kThreads);
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      libs[t] = std::make_unique<Library>(Library::Kind::FRAGMENT, "sftest_threads");
      for (int i = 0; i < kOps; ++i) {
        libs[t]->def(fmt::format("op_{}_{}(Tensor x) -> Tensor", t, i), scale_meta);
        EXPECT_NE(Dispatcher::instance().find(fmt::format("sftest_threads::op_{}_{}", t, i)),
                  nullptr);
        Dispatcher::instance().all_operators();
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(Dispatcher::instance().overloads("sftest_threads::op_3_49").size(), 1u);
  libs.clear();
  EXPECT_EQ(Dispatcher::instance().find("sftest_threads::op_0_0"), nullptr);
}

}  // namespace
}  // namespace symmflow
