#include "symmflow/schema/parser.h"

#include <gtest/gtest.h>

#include <cmath>

namespace symmflow {
namespace {

// Schemas quoted in /work/shared/seeds/ (000, 001, 003), as written there.
const char* kSeedSchemas[] = {
    "_c10d_functional::all_reduce_coalesced_(Tensor[](a!) inputs, str reduce_op, str "
    "group_name) -> Tensor[](a!)",
    "multimem_all_reduce_(Tensor(a!) input, str reduce_op, str group_name) -> Tensor(a!)",
    "multimem_all_reduce_(Tensor(a!) input, str reduce_op, str group_name) -> ()",
    "multimem_all_reduce_noreturn_(Tensor(a!) input, str reduce_op, str group_name) -> ()",
    "batch_p2p_ops(str[] op_list, int[] peer_list, int[] tag_list, Tensor[] tensors, str "
    "group_name) -> Tensor[]",
    "my_collective(Tensor x) -> Tensor",
    "my_collective(SymmMemTensor x) -> Tensor",  // seed 004, option 1
    // DESIGN.md §3 and §6
    "ns::name.overload(Tensor(a!) x, Tensor[] xs, int[] n, float f=1.0, *, str "
    "reduce_op=\"sum\", Tensor? out=None) -> (Tensor(a!), Tensor)",
    "fused_all_reduce_rms_norm_(Tensor(a!) x, Tensor w, str group_name) -> Tensor(a!)",
};

// Real PyTorch schemas (aten, _c10d_functional, symm_mem, prim).
const char* kTorchSchemas[] = {
    "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
    "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
    "aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
    "aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? "
    "dtype=None) -> Tensor",
    "aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, "
    "SymInt step=1) -> Tensor(a)",
    "aten::split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> "
    "Tensor(a)[]",
    "aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
    "aten::empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
    "Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
    "aten::rand(SymInt[] size, *, Generator? generator=None, ScalarType? dtype=None, Layout? "
    "layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
    "aten::contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> "
    "Tensor(a)",
    "aten::to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, "
    "MemoryFormat? memory_format=None) -> Tensor(a)",
    "aten::index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False) "
    "-> Tensor(a!)",
    "aten::_foreach_add_.List(Tensor(a!)[] self, Tensor[] other, *, Scalar alpha=1) -> ()",
    "aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, "
    "SymInt[2] padding=0, SymInt[2] dilation=1, SymInt groups=1) -> Tensor",
    "aten::layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? "
    "bias=None, float eps=1e-05, bool cudnn_enable=True) -> Tensor",
    "aten::permute(Tensor(a) self, int[] dims) -> Tensor(a)",
    "aten::div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor",
    "aten::upsample_nearest2d.vec(Tensor input, SymInt[]? output_size, float[]? "
    "scale_factors) -> Tensor",
    "aten::native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, "
    "Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) -> (Tensor, "
    "Tensor, Tensor)",
    "aten::mse_loss(Tensor self, Tensor target, int reduction=Mean) -> Tensor",
    "aten::sum.dim_DimnameList(Tensor self, Dimname[1] dim, bool keepdim=False, *, "
    "ScalarType? dtype=None) -> Tensor",
    "aten::set_.source_Storage(Tensor(a!) self, Storage source) -> Tensor(a!)",
    "aten::record_stream(Tensor(a!) self, Stream s) -> ()",
    "aten::format(str self, ...) -> str",
    "prim::TupleUnpack(Any tup) -> ...",
    "aten::hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor",
    "aten::clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor",
    "aten::nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) "
    "-> Tensor",
    "aten::flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)",
    "aten::std.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool "
    "keepdim=False) -> Tensor",
    "aten::lift_fresh(Tensor(a) self) -> Tensor(a)",
    "aten::_fused_adam_(Tensor(a!)[] self, Tensor(b!)[] grads, Tensor(c!)[] exp_avgs, "
    "float lr, float beta1, float beta2, float weight_decay, float eps, bool amsgrad, bool "
    "maximize, *, Tensor? grad_scale=None, Tensor? found_inf=None) -> ()",
    "aten::unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]",
    "aten::alias_like(Tensor(a|b) self) -> Tensor(a|b)",
    "aten::wildcard(Tensor(*) self) -> Tensor(*)",
    "aten::renorm(Tensor self, Scalar p, int dim, Scalar maxnorm, float eps=1e-12, float "
    "tol=-1e-05, float clip=inf, float lo=-inf, float h=.5) -> Tensor",
    "aten::string_defaults(str a='sum', str b=\"it's\", str c='say \\'hi\\'') -> ()",
    "aten::list_defaults(int[] a=[0, 1], int[] b=[], float[] c=[1.5, -2.0], bool[2] "
    "d=[True, False]) -> ()",
    "aten::scalar_type_default(Tensor self, ScalarType dtype=long) -> Tensor",
    "aten::opt_list_alias(Tensor(a!)?[] xs, Tensor[](b)? ys) -> ()",
    "_c10d_functional::all_reduce(Tensor input, str reduce_op, str group_name) -> Tensor",
    "_c10d_functional::all_reduce_(Tensor(a!) input, str reduce_op, str group_name) -> "
    "Tensor(a!)",
    "_c10d_functional::all_reduce_coalesced(Tensor[] inputs, str reduce_op, str group_name) "
    "-> Tensor[]",
    "_c10d_functional::all_gather_into_tensor(Tensor input, int group_size, str group_name) "
    "-> Tensor",
    "_c10d_functional::all_to_all_single(Tensor input, SymInt[] output_split_sizes, SymInt[] "
    "input_split_sizes, str group_name) -> Tensor",
    "_c10d_functional::wait_tensor(Tensor tensor) -> Tensor",
    "_c10d_functional::broadcast_(Tensor(a!) input, int src, str group_name) -> Tensor(a!)",
    "symm_mem::multimem_all_reduce_(Tensor(a!) input, str reduce_op, str group_name) -> "
    "Tensor(a!)",
    "symm_mem::one_shot_all_reduce(Tensor input, str reduce_op, str group_name) -> Tensor",
    "symm_mem::one_shot_all_reduce_out(Tensor input, str reduce_op, str group_name, Tensor(a!) "
    "out) -> Tensor(a!)",
    "symm_mem::two_shot_all_reduce_(Tensor(a!) input, str reduce_op, str group_name) -> "
    "Tensor(a!)",
    "symm_mem::fused_all_gather_matmul(Tensor A, Tensor[] Bs, int gather_dim, str group_name, "
    "*, bool return_A=True) -> (Tensor?, Tensor[])",
    "symm_mem::stream_write_value32_(Tensor(a!) input, SymInt offset, SymInt val) -> Tensor(a!)",
    "aten::max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, Tensor(b!) "
    "max_values) -> (Tensor(a!) values, Tensor(b!) indices)",
    "aten::_assert_async.msg(Tensor self, str assert_msg) -> ()",
    "aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
    "aten::lstm.input(Tensor input, Tensor[] hx, Tensor[] params, bool has_biases, int "
    "num_layers, float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, "
    "Tensor, Tensor)",
    "aten::as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? "
    "storage_offset=None) -> Tensor(a)",
    "aten::randint.low_generator(SymInt low, SymInt high, SymInt[] size, *, Generator? "
    "generator, ScalarType? dtype=long, Layout? layout=None, Device? device=None, bool? "
    "pin_memory=None) -> Tensor",
    "aten::full.names(int[] size, Scalar fill_value, *, Dimname[]? names, ScalarType? "
    "dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
    "aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
    "aten::resize_(Tensor(a!) self, SymInt[] size, *, MemoryFormat? memory_format=None) -> "
    "Tensor(a!)",
    "aten::_foreach_mul.Scalar(Tensor[] self, Scalar scalar) -> Tensor[]",
    "aten::__and__.Tensor(Tensor self, Tensor other) -> Tensor",
    "c10d::batch_isend_irecv(str[] ops, Tensor(a!)[] tensors, int[] peers, int[] tags, str "
    "group_name) -> ()",
};

void expect_round_trip(const std::string& text, std::string_view ns = "") {
  SCOPED_TRACE(text);
  FunctionSchema s = parse_schema(text, ns);
  std::string printed = s.to_string();
  FunctionSchema again = parse_schema(printed);
  EXPECT_EQ(again, s) << printed;
  EXPECT_EQ(again.to_string(), printed);
}

TEST(SchemaParser, SeedSchemasParseAndRoundTrip) {
  for (const char* s : kSeedSchemas) expect_round_trip(s, "myns");
}

TEST(SchemaParser, TorchSchemasParseAndRoundTrip) {
  for (const char* s : kTorchSchemas) expect_round_trip(s);
}

TEST(SchemaParser, CanonicalSchemasPrintVerbatim) {
  // Written canonically, the printer gives back the very same text.
  for (const char* s : kTorchSchemas) {
    std::string t(s);
    if (t.find(".5") != std::string::npos) continue;  // `.5` is kept as written: ok
    EXPECT_EQ(parse_schema(t).to_string(), t);
  }
}

TEST(SchemaParser, NamesAndOverloads) {
  auto s = parse_schema("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  EXPECT_EQ(s.ns, "aten");
  EXPECT_EQ(s.name, "add");
  EXPECT_EQ(s.overload, "Tensor");
  EXPECT_EQ(s.qualified_name(), "aten::add");
  EXPECT_EQ(s.full_name(), "aten::add.Tensor");
  auto r = parse_schema("relu(Tensor self) -> Tensor", "aten");
  EXPECT_EQ(r.full_name(), "aten::relu");
  EXPECT_EQ(r.to_string(), "aten::relu(Tensor self) -> Tensor");
}

TEST(SchemaParser, ArgumentsKwargsAndDefaults) {
  auto s = parse_schema(
      "aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? "
      "dtype=None) -> Tensor");
  ASSERT_EQ(s.arguments.size(), 4u);
  EXPECT_EQ(s.arguments[1].type, SchemaType::optional(SchemaType::list(SchemaType(SchemaType::Kind::Int), 1)));
  EXPECT_FALSE(s.arguments[1].default_value.has_value());
  EXPECT_FALSE(s.arguments[2].kwarg_only);
  ASSERT_TRUE(s.arguments[2].default_value);
  EXPECT_EQ(s.arguments[2].default_value->value.to_bool(), false);
  EXPECT_TRUE(s.arguments[3].kwarg_only);
  EXPECT_TRUE(s.arguments[3].default_value->value.is_none());
  EXPECT_EQ(s.find_argument("keepdim"), &s.arguments[2]);
  EXPECT_EQ(s.find_argument("nope"), nullptr);
  EXPECT_EQ(s.argument_index("dtype"), 3u);
}

TEST(SchemaParser, DefaultValuesKeepValueAndText) {
  auto s = parse_schema(
      "aten::f(int a=-3, float b=1e-05, float c=-inf, str d='sum', int[] e=[0, 1], "
      "MemoryFormat f=contiguous_format, ScalarType g=long, float h=2, Scalar i=True) -> ()");
  const auto& a = s.arguments;
  EXPECT_EQ(a[0].default_value->value.to_int(), -3);
  EXPECT_DOUBLE_EQ(a[1].default_value->value.to_double(), 1e-5);
  EXPECT_EQ(a[1].default_value->text, "1e-05");
  EXPECT_TRUE(std::isinf(a[2].default_value->value.to_double()));
  EXPECT_LT(a[2].default_value->value.to_double(), 0);
  EXPECT_EQ(a[3].default_value->value.to_string(), "sum");
  EXPECT_EQ(a[3].default_value->text, "'sum'");
  EXPECT_EQ(a[4].default_value->value.to_int_list(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(a[5].default_value->value.to_string(), "contiguous_format");
  EXPECT_EQ(a[5].default_value->text, "contiguous_format");
  EXPECT_EQ(a[6].default_value->value.to_dtype(), DType::i64);
  EXPECT_EQ(a[7].default_value->value.to_int(), 2);
  EXPECT_EQ(a[8].default_value->value.to_bool(), true);
}

TEST(SchemaParser, Returns) {
  EXPECT_TRUE(parse_schema("a::f() -> ()").returns.empty());
  auto named = parse_schema("a::f(Tensor x) -> (Tensor values, Tensor indices)");
  ASSERT_EQ(named.returns.size(), 2u);
  EXPECT_EQ(named.returns[1].name, "indices");
  auto single_named = parse_schema("a::f(Tensor x) -> (Tensor out)");
  EXPECT_EQ(single_named.to_string(), "a::f(Tensor x) -> (Tensor out)");
  auto parens = parse_schema("a::f(Tensor x) -> (Tensor)");
  EXPECT_EQ(parens.to_string(), "a::f(Tensor x) -> Tensor");
  auto list = parse_schema("a::f(Tensor x) -> Tensor[]");
  EXPECT_EQ(list.returns[0].type, SchemaType::list(SchemaType::tensor()));
  auto varret = parse_schema("prim::f(Any x) -> ...");
  EXPECT_TRUE(varret.is_varret);
  EXPECT_TRUE(varret.returns.empty());
}

TEST(SchemaParser, ParseType) {
  for (const char* t : {"Tensor", "int[2]", "Tensor?[]", "int[]?", "Generator?", "SymInt[]",
                        "float[]?", "bool[3]", "Any", "Stream", "Storage", "Dimname[]"}) {
    EXPECT_EQ(parse_type(t).to_string(), t);
  }
  EXPECT_EQ(parse_type("Tensor?[]"), SchemaType::list(SchemaType::optional(SchemaType::tensor())));
  EXPECT_EQ(parse_type("int[2]").fixed_size(), 2);
  EXPECT_NE(parse_type("int[2]"), parse_type("int[]"));
  EXPECT_TRUE(is_tensor_like(parse_type("Tensor")));
  EXPECT_TRUE(is_tensor_like(parse_type("Tensor?")));
  EXPECT_TRUE(is_tensor_like(parse_type("Tensor[]")));
  EXPECT_TRUE(is_tensor_like(parse_type("Tensor?[]")));
  EXPECT_FALSE(is_tensor_like(parse_type("int")));
  EXPECT_FALSE(is_tensor_like(parse_type("Tensor[]?")));
  EXPECT_THROW(parse_type("Tensor(a)"), SchemaParseError);
}

}  // namespace
}  // namespace symmflow

namespace symmflow {
namespace {

TEST(SchemaParser, WhitespaceIsInsignificant) {
  auto loose = parse_schema(
      "  aten :: f . o ( Tensor ( a ! ) x , int [ 2 ] y = [ 1 , 2 ] ,\n * , str z = 'q' ) -> "
      "( Tensor ( a ! ) , Tensor )  ");
  auto tight = parse_schema("aten::f.o(Tensor(a!) x, int[2] y=[1, 2], *, str z='q') -> "
                            "(Tensor(a!), Tensor)");
  EXPECT_EQ(loose, tight);
  EXPECT_EQ(loose.to_string(), tight.to_string());
}

}  // namespace
}  // namespace symmflow
