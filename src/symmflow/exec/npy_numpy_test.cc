// write_npy/read_npy against real numpy: numpy writes fixtures (at test time) that
// we read, and numpy loads what we write and compares it byte for byte with its
// own np.save. Skipped, with the reason, when no python3 can import numpy.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <optional>

#include "symmflow/exec/npy.h"
#include "symmflow/exec/npy_testing.h"

namespace symmflow::exec {
namespace {

using testing::expect_error;
using testing::NpyTempDir;
using testing::read_bytes;
using testing::write_bytes;

// A python3 that imports numpy: PATH's first, then the system one (a pyenv shim
// on PATH often hides apt's python3-numpy).
const std::optional<std::string>& numpy_python() {
  static const std::optional<std::string> py = []() -> std::optional<std::string> {
    for (const char* cand : {"python3", "/usr/bin/python3"})
      if (std::system(fmt::format("{} -c 'import numpy' >/dev/null 2>&1", cand).c_str()) == 0)
        return std::string(cand);
    return std::nullopt;
  }();
  return py;
}

#define SKIP_WITHOUT_NUMPY()                                                              \
  if (!numpy_python())                                                                    \
  GTEST_SKIP() << "no python3 can import numpy (apt-get install python3-numpy) to check " \
                  "against real numpy files"

// Runs `script` with the folder as argv[1]; its output is the failure message.
void run_python(const NpyTempDir& dir, const std::string& script) {
  const std::string py = dir.path("script.py"), log = dir.path("script.log");
  write_bytes(py, script);
  const int rc = std::system(
      fmt::format("{} '{}' '{}' >'{}' 2>&1", *numpy_python(), py, dir.dir().string(), log).c_str());
  ASSERT_EQ(rc, 0) << "python failed:\n" << read_bytes(log);
}

constexpr const char* kGenerate = R"(
import sys, numpy as np
d = sys.argv[1]
def save(name, a): np.save(f"{d}/{name}.npy", a)
save("f32", np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5)
save("f64_0d", np.array(3.25))
save("f16", np.array([0.5, -1.0, 65504.0, np.inf, -0.0], dtype=np.float16))
save("i32", np.array([[1, -2], [2147483647, -2147483648]], dtype=np.int32))
save("i64", np.array([-(2**63), 2**63 - 1, 0], dtype=np.int64))
save("i64_empty", np.zeros((0, 3), dtype=np.int64))
save("bool", np.array([True, False, False, True]))
save("bf16_bits", np.array([0x3f80, 0xc000, 0x3f00], dtype=np.uint16))
save("fortran", np.asfortranarray(np.arange(24, dtype=np.float32).reshape(2, 3, 4)))
save("transposed", np.arange(6, dtype=np.int64).reshape(2, 3).T)  # saved as fortran_order
for v in (2, 3):
    with open(f"{d}/v{v}.npy", "wb") as f:
        np.lib.format.write_array(f, np.arange(5, dtype=np.int32), version=(v, 0))
save("big_endian", np.arange(3, dtype=">f4"))
save("complex", np.arange(3, dtype=np.complex64))
save("u8", np.arange(3, dtype=np.uint8))
save("structured", np.zeros(2, dtype=[("a", "<f4"), ("b", "<i4")]))
)";

TEST(NpyNumpy, ReadsNumpyFiles) {
  SKIP_WITHOUT_NUMPY();
  NpyTempDir dir;
  run_python(dir, kGenerate);
  auto in = [&](const char* name) { return dir.path(name); };

  Tensor f32 = read_npy(in("f32.npy"));
  ASSERT_EQ(f32.type_string(), "f32[2, 3]");
  for (int i = 0; i < 6; ++i) EXPECT_EQ(f32.data<float>()[i], float(i) - 2.5f);

  Tensor f64 = read_npy(in("f64_0d.npy"), DType::f64);
  ASSERT_EQ(f64.dim(), 0);
  EXPECT_EQ(f64.item(), 3.25);

  Tensor f16 = read_npy(in("f16.npy"));
  ASSERT_EQ(f16.type_string(), "f16[5]");
  const Half* h = f16.data<Half>();
  EXPECT_EQ(float(h[0]), 0.5f);
  EXPECT_EQ(float(h[1]), -1.0f);
  EXPECT_EQ(float(h[2]), 65504.0f);
  EXPECT_TRUE(std::isinf(float(h[3])));
  EXPECT_EQ(h[4].bits, 0x8000);  // -0.0 kept

  Tensor i32 = read_npy(in("i32.npy"));
  ASSERT_EQ(i32.type_string(), "i32[2, 2]");
  EXPECT_EQ(i32.data<int32_t>()[1], -2);
  EXPECT_EQ(i32.data<int32_t>()[2], INT32_MAX);
  EXPECT_EQ(i32.data<int32_t>()[3], INT32_MIN);

  Tensor i64 = read_npy(in("i64.npy"));
  EXPECT_EQ(i64.data<int64_t>()[0], INT64_MIN);
  EXPECT_EQ(i64.data<int64_t>()[1], INT64_MAX);
  EXPECT_EQ(read_npy(in("i64_empty.npy")).type_string(), "i64[0, 3]");

  Tensor b = read_npy(in("bool.npy"));
  ASSERT_EQ(b.type_string(), "bool[4]");
  EXPECT_TRUE(b.data<bool>()[0]);
  EXPECT_FALSE(b.data<bool>()[1]);
  EXPECT_TRUE(b.data<bool>()[3]);

  Tensor bf = read_npy(in("bf16_bits.npy"), DType::bf16);
  ASSERT_EQ(bf.type_string(), "bf16[3]");
  EXPECT_EQ(float(bf.data<BFloat16>()[0]), 1.0f);
  EXPECT_EQ(float(bf.data<BFloat16>()[1]), -2.0f);
  EXPECT_EQ(float(bf.data<BFloat16>()[2]), 0.5f);
  expect_error([&] { read_npy(in("bf16_bits.npy")); }, {"bf16_bits.npy", "read only as bf16"});

  Tensor f = read_npy(in("fortran.npy"));
  ASSERT_EQ(f.sizes(), (Shape{2, 3, 4}));
  ASSERT_TRUE(f.is_contiguous());
  for (int i = 0; i < 24; ++i) EXPECT_EQ(f.data<float>()[i], float(i));
  Tensor t = read_npy(in("transposed.npy"));
  ASSERT_EQ(t.sizes(), (Shape{3, 2}));
  const int64_t want_t[6] = {0, 3, 1, 4, 2, 5};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(t.data<int64_t>()[i], want_t[i]);

  for (const char* v : {"v2.npy", "v3.npy"}) {
    Tensor x = read_npy(in(v));
    ASSERT_EQ(x.type_string(), "i32[5]") << v;
    EXPECT_EQ(x.data<int32_t>()[4], 4) << v;
  }

  expect_error([&] { read_npy(in("big_endian.npy")); }, {"big_endian.npy", "'>f4'", "big-endian"});
  expect_error([&] { read_npy(in("complex.npy")); }, {"complex.npy", "'<c8'", "unsupported"});
  expect_error([&] { read_npy(in("u8.npy")); }, {"u8.npy", "'|u1'", "unsupported"});
  expect_error([&] { read_npy(in("structured.npy")); }, {"structured.npy", "structured"});
}

// numpy loads each file, compares values and dtype, and (numpy >= 1.23, whose
// header padding we copy) compares the whole file with its own np.save.
constexpr const char* kCheck = R"(
import sys, numpy as np
d = sys.argv[1]
want = {
    "f32": np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5,
    "f64_0d": np.array(3.25),
    "f16": np.array([0.5, -1.0, 65504.0, np.inf, -0.0], dtype=np.float16),
    "bf16": np.array([0x3f80, 0xc000, 0x3f00], dtype=np.uint16),
    "i32": np.array([[1, -2], [2147483647, -2147483648]], dtype=np.int32),
    "i64_empty": np.zeros((0, 3), dtype=np.int64),
    "bool": np.array([True, False, False, True]),
    "transposed": np.ascontiguousarray(np.arange(6, dtype=np.int64).reshape(2, 3).T),
    "growth_room": np.zeros((2,) + (1,) * 14, dtype=np.float32),
    "aligned": np.zeros((0,) + (10,) * 9 + (100,), dtype=np.float32),
}
same_bytes = tuple(int(x) for x in np.__version__.split(".")[:2]) >= (1, 23)
bad = []
for name, w in want.items():
    path = f"{d}/{name}.npy"
    a = np.load(path)
    if a.dtype != w.dtype or a.shape != w.shape or a.tobytes() != w.tobytes():
        bad.append(f"{name}: got {a.dtype} {a.shape} {a!r}, want {w.dtype} {w.shape} {w!r}")
    np.save(f"{d}/{name}.ref.npy", w)
    mine, ref = open(path, "rb").read(), open(f"{d}/{name}.ref.npy", "rb").read()
    if same_bytes and mine != ref:
        bad.append(f"{name}: bytes differ from np.save:\n"
                   f"  ours {mine[:140]!r}\n  np   {ref[:140]!r}")
if bad:
    print("\n".join(bad))
    sys.exit(1)
)";

TEST(NpyNumpy, NumpyLoadsOurFiles) {
  SKIP_WITHOUT_NUMPY();
  NpyTempDir dir;
  auto out = [&](const char* name) { return dir.path(name); };

  Tensor f32 = Tensor::empty({2, 3}, DType::f32);
  for (int i = 0; i < 6; ++i) f32.data<float>()[i] = float(i) - 2.5f;
  write_npy(out("f32.npy"), f32);

  Tensor f64 = Tensor::empty({}, DType::f64);
  *f64.data<double>() = 3.25;
  write_npy(out("f64_0d.npy"), f64);

  Tensor f16 = Tensor::empty({5}, DType::f16);
  const float hv[5] = {0.5f, -1.0f, 65504.0f, INFINITY, -0.0f};
  for (int i = 0; i < 5; ++i) f16.data<Half>()[i] = Half(hv[i]);
  write_npy(out("f16.npy"), f16);

  Tensor bf = Tensor::empty({3}, DType::bf16);
  const float bv[3] = {1.0f, -2.0f, 0.5f};
  for (int i = 0; i < 3; ++i) bf.data<BFloat16>()[i] = BFloat16(bv[i]);
  write_npy(out("bf16.npy"), bf);

  Tensor i32 = Tensor::empty({2, 2}, DType::i32);
  const int32_t iv[4] = {1, -2, INT32_MAX, INT32_MIN};
  for (int i = 0; i < 4; ++i) i32.data<int32_t>()[i] = iv[i];
  write_npy(out("i32.npy"), i32);

  write_npy(out("i64_empty.npy"), Tensor::empty({0, 3}, DType::i64));

  Tensor b = Tensor::empty({4}, DType::boolean);
  const bool bools[4] = {true, false, false, true};
  for (int i = 0; i < 4; ++i) b.data<bool>()[i] = bools[i];
  write_npy(out("bool.npy"), b);

  Tensor base = Tensor::empty({2, 3}, DType::i64);
  for (int i = 0; i < 6; ++i) base.data<int64_t>()[i] = i;
  write_npy(out("transposed.npy"), base.as_strided({3, 2}, {1, 3}, 0));

  // Shapes where numpy's header padding rules change the size (npy_test.cc).
  Tensor growth = Tensor::empty({2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, DType::f32);
  growth.data<float>()[0] = growth.data<float>()[1] = 0.0f;
  write_npy(out("growth_room.npy"), growth);
  write_npy(out("aligned.npy"), Tensor::empty({0, 10, 10, 10, 10, 10, 10, 10, 10, 10, 100}));

  run_python(dir, kCheck);
}

}  // namespace
}  // namespace symmflow::exec
