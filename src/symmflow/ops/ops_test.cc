// The registered ops end to end: resolved by name and argument kinds, called
// through the dispatcher on CPU and Meta, with the aliasing their schemas promise.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "symmflow/kernels/factories.h"
#include "symmflow/library/dispatcher.h"
#include "symmflow/library/symm_mem_args.h"

namespace symmflow {
namespace {

std::vector<IValue> call(std::string_view name, std::vector<IValue> args, DispatchKey key = DispatchKey::CPU,
                         Kwargs kwargs = {}) {
  OpContext ctx(key);
  return Dispatcher::instance().call(name, ctx, args, kwargs);
}

TEST(AtenOps, AddResolvesByArgumentKind) {
  Tensor a = kernels::arange(Scalar(int64_t(4)), DType::f32);
  Tensor b = kernels::full({4}, Scalar(2.0));
  Tensor r = call("aten::add", {a, b})[0].to_tensor();  // add.Tensor
  EXPECT_EQ(r.data<float>()[3], 5.0f);
  Tensor s = call("aten::add", {a, 10})[0].to_tensor();  // add.Scalar
  EXPECT_EQ(s.data<float>()[1], 11.0f);
  Tensor t = call("aten::add", {a, b}, DispatchKey::CPU, {{"alpha", IValue(3)}})[0].to_tensor();
  EXPECT_EQ(t.data<float>()[0], 6.0f);
}

TEST(AtenOps, InPlaceReturnsItsSelf) {
  Tensor a = kernels::zeros({3});
  Tensor r = call("aten::add_", {a, 1.5})[0].to_tensor();
  EXPECT_TRUE(r.is_same(a));
  EXPECT_EQ(a.data<float>()[2], 1.5f);
  const auto* op = Dispatcher::instance().find("aten::add_.Scalar");
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->schema().mutated_arguments(), (std::vector<size_t>{0}));
}

TEST(AtenOps, ViewsAliasTheirBase) {
  Tensor a = kernels::zeros({4, 4});
  Tensor row = call("aten::select", {a, 0, 2})[0].to_tensor();
  call("aten::fill_", {row, 7.0});
  EXPECT_EQ(a.data<float>()[8], 7.0f);
  EXPECT_EQ(a.data<float>()[7], 0.0f);
  Tensor col = call("aten::slice", {a, 1, 1, 3})[0].to_tensor();
  EXPECT_EQ(col.sizes(), (Shape{4, 2}));
  EXPECT_TRUE(col.shares_storage(a));
}

TEST(AtenOps, MetaKernelsGiveTypesOnly) {
  Tensor x = Tensor::meta({8, 16}, DType::bf16);
  Tensor w = Tensor::meta({32, 16}, DType::bf16);
  Tensor y = call("aten::linear", {x, w, IValue()}, DispatchKey::Meta)[0].to_tensor();
  EXPECT_TRUE(y.is_meta());
  EXPECT_EQ(y.type_string(), "bf16[8, 32]");
  Tensor z = call("aten::zeros", {std::vector<int64_t>{2, 3}}, DispatchKey::Meta)[0].to_tensor();
  EXPECT_TRUE(z.is_meta());
  EXPECT_EQ(z.type_string(), "f32[2, 3]");
  Tensor s = call("aten::sum", {x, std::vector<int64_t>{1}}, DispatchKey::Meta)[0].to_tensor();
  EXPECT_EQ(s.type_string(), "bf16[8]");
}

// aten::copy_ has PyTorch's memory checks (kernels::checked_copy_), on both keys.
TEST(AtenOps, CopyRefusesOverlappingAndExpandedWrites) {
  auto error_of = [](auto&& fn) -> std::string {
    try {
      fn();
    } catch (const Error& e) {
      return e.what();
    }
    return "<no error>";
  };
  Tensor x = kernels::arange(Scalar(int64_t(8)), DType::f32);
  Tensor a = call("aten::slice", {x, 0, 0, 6})[0].to_tensor();
  Tensor b = call("aten::slice", {x, 0, 2, 8})[0].to_tensor();
  EXPECT_NE(error_of([&] { call("aten::copy_", {a, b}); }).find("refer to a single memory location"),
            std::string::npos);
  EXPECT_NE(error_of([&] { call("aten::add_", {a, b}); }).find("refer to a single memory location"),
            std::string::npos);
  for (DispatchKey key : {DispatchKey::CPU, DispatchKey::Meta}) {
    Tensor base = key == DispatchKey::Meta ? Tensor::meta({3}, DType::f32) : kernels::zeros({3});
    Tensor src = key == DispatchKey::Meta ? Tensor::meta({2, 3}, DType::f32) : kernels::ones({2, 3});
    Tensor e = call("aten::expand", {base, std::vector<int64_t>{2, 3}}, key)[0].to_tensor();
    EXPECT_NE(error_of([&] { call("aten::copy_", {e, src}, key); })
                  .find("more than one element of the written-to tensor refers to a single memory location"),
              std::string::npos);
    EXPECT_NE(error_of([&] { call("aten::copy_", {base, src}, key); })
                  .find("copy_: output with shape [3] doesn't match the broadcast shape [2, 3]"),
              std::string::npos);
    EXPECT_NE(error_of([&] { call("aten::as_strided", {base, std::vector<int64_t>{2}, std::vector<int64_t>{-1}}, key); })
                  .find("Negative strides are not supported"),
              std::string::npos);
    EXPECT_NE(error_of([&] { call("aten::full", {std::vector<int64_t>{2}, std::nan("")}, key, {{"dtype", IValue(DType::i64)}}); })
                  .find("value cannot be converted to type int64_t without overflow"),
              std::string::npos);
    call("aten::fill_", {e, 1.0}, key);  // fill_ has no overlap check (PyTorch)
  }
  Tensor same = call("aten::slice", {x, 0, 0, 6})[0].to_tensor();
  call("aten::copy_", {a, same});  // the same geometry: fine
}

TEST(AtenOps, FactoriesAndMatmulOnCpu) {
  Tensor a = call("aten::arange", {0, 6})[0].to_tensor();
  EXPECT_EQ(a.dtype(), DType::i64);
  Tensor m = call("aten::view", {call("aten::ones", {std::vector<int64_t>{6}})[0], std::vector<int64_t>{2, 3}})[0].to_tensor();
  Tensor p = call("aten::mm", {m, call("aten::t", {m})[0]})[0].to_tensor();
  EXPECT_EQ(p.type_string(), "f32[2, 2]");
  EXPECT_EQ(p.data<float>()[0], 3.0f);
  Tensor r1 = call("aten::randn", {std::vector<int64_t>{16}}, DispatchKey::CPU, {{"seed", IValue(7)}})[0].to_tensor();
  Tensor r2 = call("aten::randn", {std::vector<int64_t>{16}}, DispatchKey::CPU, {{"seed", IValue(7)}})[0].to_tensor();
  EXPECT_EQ(std::memcmp(r1.data_ptr(), r2.data_ptr(), 64), 0);
}

TEST(C10dOps, MetaShapes) {
  Tensor x = Tensor::meta({6, 4}, DType::f32);
  auto k = DispatchKey::Meta;
  EXPECT_EQ(call("c10d::all_gather_into_tensor", {x, 3, "world"}, k)[0].to_tensor().type_string(), "f32[18, 4]");
  EXPECT_EQ(call("c10d::reduce_scatter_tensor", {x, "sum", 3, "world"}, k)[0].to_tensor().type_string(), "f32[2, 4]");
  EXPECT_THROW(call("c10d::reduce_scatter_tensor", {x, "sum", 4, "world"}, k), Error);
  EXPECT_THROW(call("c10d::all_reduce", {x, "median", "world"}, k), Error);
  Tensor a2a = call("c10d::all_to_all_single", {x, std::vector<int64_t>{1, 2}, std::vector<int64_t>{3, 3}, "world"}, k)[0].to_tensor();
  EXPECT_EQ(a2a.type_string(), "f32[3, 4]");
  Tensor same = call("c10d::all_reduce_", {x, "sum", "world"}, k)[0].to_tensor();
  EXPECT_TRUE(same.is_same(x));
}

TEST(C10dOps, BatchIsendIrecvMutatesOnlyItsReceives) {
  const auto* op = Dispatcher::instance().find("c10d::batch_isend_irecv");
  ASSERT_NE(op, nullptr);
  EXPECT_TRUE(op->has_mutation_resolver());
  Tensor s = Tensor::meta({4}, DType::f32), r = Tensor::meta({4}, DType::f32);
  std::vector<IValue> args = {std::vector<std::string>{"isend", "irecv", "irecv"}, std::vector<int64_t>{1, 0, 1},
                              std::vector<int64_t>{0, 0, 1}, std::vector<Tensor>{s, r, r}, "world"};
  auto slots = op->mutated_slots(args);
  ASSERT_EQ(slots.size(), 2u);
  EXPECT_EQ(slots[0], (MutatedSlot{3, 1}));
  EXPECT_EQ(slots[1], (MutatedSlot{3, 2}));
  args[0] = std::vector<std::string>{"isend", "recv", "irecv"};
  EXPECT_THROW(call("c10d::batch_isend_irecv", args, DispatchKey::Meta), Error);
}

TEST(SymmMemOps, SymmetricArgsAndAliasedReturns) {
  EXPECT_TRUE(requires_symmetric_memory("symm_mem::multimem_all_reduce_", "input"));
  EXPECT_TRUE(requires_symmetric_memory("symm_mem::multimem_all_gather_out", "out"));
  EXPECT_FALSE(requires_symmetric_memory("symm_mem::multimem_all_gather_out", "input"));
  EXPECT_EQ(symm_mem_args("symm_mem::tile_reduce"), (std::vector<std::string>{"in_tile"}));
  const auto& s = Dispatcher::instance().get("symm_mem::multimem_all_reduce_").schema();
  EXPECT_EQ(s.to_string(),
            "symm_mem::multimem_all_reduce_(Tensor(a!) input, str reduce_op, str group_name) -> Tensor(a!)");
  EXPECT_EQ(s.aliased_input_of_return(0), std::optional<size_t>(0));
  Tensor x = Tensor::meta({8}, DType::bf16);
  EXPECT_TRUE(call("symm_mem::two_shot_all_reduce_", {x, "sum", "world"}, DispatchKey::Meta)[0].to_tensor().is_same(x));
  EXPECT_TRUE(call("symm_mem::tile_reduce", {x, x, 0, "world"}, DispatchKey::Meta).empty());
}

TEST(Registry, EveryOpHasAMetaKernel) {
  for (Operator* op : Dispatcher::instance().all_operators()) {
    if (!op->is_defined()) continue;
    const auto& ns = op->schema().ns;
    if (ns != "aten" && ns != "c10d" && ns != "symm_mem") continue;
    EXPECT_TRUE(op->has_kernel(DispatchKey::Meta)) << op->full_name();
    if (ns == "aten") {
      EXPECT_TRUE(op->has_kernel(DispatchKey::CPU)) << op->full_name();
    }
  }
}

}  // namespace
}  // namespace symmflow
