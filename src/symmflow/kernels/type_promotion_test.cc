#include "symmflow/kernels/type_promotion.h"

#include <gtest/gtest.h>

namespace symmflow::kernels {
namespace {

Tensor vec(DType t) { return Tensor::meta({2}, t); }
Tensor zero_dim(DType t) { return Tensor::meta({}, t); }

TEST(TypePromotion, DimTensorsZeroDimTensorsScalars) {
  struct Case {
    std::vector<Operand> ops;
    DType want;
    const char* what;
  };
  const Tensor i32 = vec(DType::i32), i64 = vec(DType::i64), f32 = vec(DType::f32),
               bf16 = vec(DType::bf16), f16 = vec(DType::f16), b = vec(DType::boolean);
  const Tensor f32_0 = zero_dim(DType::f32), f64_0 = zero_dim(DType::f64),
               i64_0 = zero_dim(DType::i64), f16_0 = zero_dim(DType::f16);
  const Scalar s_int(2), s_float(2.5), s_bool(true);
  const Case cases[] = {
      {{i32, s_float}, DType::f32, "int tensor * float Scalar -> default float"},
      {{i32, s_int}, DType::i32, "int tensor * int Scalar stays i32"},
      {{b, s_int}, DType::i64, "bool tensor + int Scalar -> i64"},
      {{b, s_bool}, DType::boolean, "bool + bool Scalar"},
      {{b, b}, DType::boolean, "bool + bool"},
      {{bf16, f32_0}, DType::bf16, "bf16 + 0-dim f32: same category, dim wins"},
      {{i32, f64_0}, DType::f64, "int + 0-dim f64: higher category"},
      {{i32, i64}, DType::i64, "i32 + i64"},
      {{f16, bf16}, DType::f32, "f16 + bf16"},
      {{i64_0, f16_0}, DType::f16, "0-dim i64 + 0-dim f16"},
      {{f32_0, s_float}, DType::f32, "0-dim f32 + float Scalar"},
      {{i64_0, s_float}, DType::f32, "0-dim int + float Scalar"},
      {{bf16, s_float}, DType::bf16, "bf16 + float Scalar"},
      {{i32, f32}, DType::f32, "i32 + f32 tensors"},
      {{f64_0, bf16}, DType::bf16, "0-dim f64 first"},
      {{s_int, s_float}, DType::f32, "two Scalars"},
  };
  for (const Case& c : cases) {
    ResultType r;
    for (const Operand& o : c.ops) r.add(o);
    EXPECT_EQ(r.get(), c.want) << c.what << ": got " << dtype_name(r.get());
  }
  EXPECT_EQ(result_type({i32, s_float}), DType::f32);
  EXPECT_THROW(ResultType().get(), Error);
}

TEST(TypePromotion, ScalarDTypes) {
  EXPECT_EQ(scalar_dtype(Scalar(3)), DType::i64);
  EXPECT_EQ(scalar_dtype(Scalar(0.5)), DType::f32);
  EXPECT_EQ(scalar_dtype(Scalar(false)), DType::boolean);
  EXPECT_EQ(to_floating(DType::i32), DType::f32);
  EXPECT_EQ(to_floating(DType::boolean), DType::f32);
  EXPECT_EQ(to_floating(DType::bf16), DType::bf16);
}

TEST(TypePromotion, CanCast) {
  EXPECT_FALSE(can_cast(DType::f32, DType::i64));
  EXPECT_FALSE(can_cast(DType::bf16, DType::i32));
  EXPECT_FALSE(can_cast(DType::i32, DType::boolean));
  EXPECT_FALSE(can_cast(DType::f32, DType::boolean));
  EXPECT_TRUE(can_cast(DType::i64, DType::f32));
  EXPECT_TRUE(can_cast(DType::boolean, DType::i32));
  EXPECT_TRUE(can_cast(DType::f64, DType::bf16));
  EXPECT_TRUE(can_cast(DType::i64, DType::i32));
  try {
    check_can_cast("add_", DType::f32, DType::i64);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("result type f32 can't be cast to the desired output type i64"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace symmflow::kernels
