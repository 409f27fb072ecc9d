// Tests of write_npy/read_npy on their own: round trips of every dtype and view,
// the file layout, headers written by hand, and every error. npy_numpy_test.cc
// checks the same files against numpy itself.
#include "symmflow/exec/npy.h"

#include <gtest/gtest.h>

#include <cstring>

#include "symmflow/exec/npy_header.h"
#include "symmflow/exec/npy_testing.h"
#include "symmflow/kernels/copy.h"

namespace symmflow::exec {
namespace {

using testing::expect_error;
using testing::NpyTempDir;
using testing::read_bytes;
using testing::write_bytes;
using testing::write_raw_npy;

const DType kAll[] = {DType::f32, DType::f64, DType::bf16,   DType::f16,
                      DType::i32, DType::i64, DType::boolean};

// Arbitrary bytes (NaN payloads included) for every dtype but bool, which must be 0/1.
Tensor patterned(Shape shape, DType dtype) {
  Tensor t = Tensor::empty(shape, dtype);
  auto* p = static_cast<unsigned char*>(t.data_ptr());
  for (size_t i = 0; i < t.nbytes(); ++i)
    p[i] = dtype == DType::boolean ? (i % 3 == 0) : static_cast<unsigned char>(i * 37 + 11);
  return t;
}

// The logical contents of t as bytes in row-major order.
std::string logical_bytes(const Tensor& t) {
  if (t.numel() == 0) return "";
  Tensor c = kernels::contiguous(t);
  return std::string(static_cast<const char*>(c.data_ptr()), c.nbytes());
}

std::optional<DType> expect_for(DType d) {
  return d == DType::bf16 ? std::optional<DType>(DType::bf16) : std::nullopt;
}

TEST(Npy, RoundTripsEveryDTypeAndShape) {
  NpyTempDir dir;
  const Shape shapes[] = {{}, {0}, {5}, {2, 3}, {2, 0, 3}, {3, 1, 4}};
  for (DType d : kAll)
    for (const Shape& s : shapes) {
      SCOPED_TRACE(fmt::format("{}{}", dtype_name(d), shape_to_string(s)));
      Tensor t = patterned(s, d);
      const std::string path = dir.path("t.npy");
      write_npy(path, t);
      Tensor back = read_npy(path, expect_for(d));
      EXPECT_EQ(back.dtype(), d);
      EXPECT_EQ(back.sizes(), s);
      EXPECT_EQ(back.strides(), contiguous_strides(s));
      EXPECT_EQ(logical_bytes(back), logical_bytes(t));
      // Passing the file's own dtype as `expect` changes nothing.
      EXPECT_EQ(logical_bytes(read_npy(path, d)), logical_bytes(t));
    }
}

TEST(Npy, WritesViewsInLogicalOrder) {
  NpyTempDir dir;
  for (DType d : {DType::f32, DType::bf16, DType::i64, DType::boolean}) {
    Tensor base = patterned({3, 4}, d);
    struct View {
      const char* name;
      Tensor t;
    };
    const View views[] = {
        {"transposed", base.as_strided({4, 3}, {1, 4}, 0)},
        {"every other column", base.as_strided({3, 2}, {4, 2}, 1)},
        {"last two rows", base.as_strided({2, 4}, {4, 1}, 4)},
        {"broadcast row", base.as_strided({2, 4}, {0, 1}, 8)},
        {"permuted 3-d", base.as_strided({2, 2, 3}, {2, 1, 4}, 0)},
        {"0-d element", base.as_strided({}, {}, 7)},
    };
    for (const View& v : views) {
      SCOPED_TRACE(fmt::format("{} {}", dtype_name(d), v.name));
      write_npy(dir.path("v.npy"), v.t);
      Tensor back = read_npy(dir.path("v.npy"), expect_for(d));
      EXPECT_EQ(back.sizes(), v.t.sizes());
      EXPECT_TRUE(back.is_contiguous());
      EXPECT_EQ(logical_bytes(back), logical_bytes(v.t));
    }
  }
}

TEST(Npy, LayoutIsNumpys) {
  NpyTempDir dir;
  struct Case {
    Shape shape;
    DType dtype;
    std::string dict;  // up to the growth padding
  };
  const Case cases[] = {
      {{4}, DType::f32, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }"},
      {{}, DType::f64, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }"},
      {{2, 3}, DType::f16, "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3), }"},
      {{2, 3}, DType::bf16, "{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3), }"},
      {{1}, DType::i32, "{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }"},
      {{0, 7}, DType::i64, "{'descr': '<i8', 'fortran_order': False, 'shape': (0, 7), }"},
      {{3}, DType::boolean, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.dict);
    Tensor t = patterned(c.shape, c.dtype);
    write_npy(dir.path("l.npy"), t);
    const std::string f = read_bytes(dir.path("l.npy"));
    ASSERT_GE(f.size(), 10u);
    EXPECT_EQ(f.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
    const size_t hlen = size_t(uint8_t(f[8])) | size_t(uint8_t(f[9])) << 8;
    const size_t data_at = 10 + hlen;
    EXPECT_EQ(data_at % 64, 0u);
    EXPECT_EQ(f.size(), data_at + t.nbytes());
    const std::string header = f.substr(10, hlen);
    EXPECT_EQ(header.substr(0, c.dict.size()), c.dict);
    EXPECT_EQ(header.back(), '\n');
    EXPECT_EQ(header.find_first_not_of(' ', c.dict.size()), hlen - 1);
    // The growth padding: room for the first dimension to reach 21 digits.
    if (!c.shape.empty()) {
      EXPECT_GE(hlen - 1 - c.dict.size(), 20u);
    }
  }
  // Nothing is left behind but the file itself (the temporary was renamed).
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.dir()), {}), 1);
}

// Sizes np.save (numpy 1.24) gives these shapes; they depend on numpy's two quirks.
TEST(NpyHeader, PreambleSizesAreNumpys) {
  auto size_of = [](Shape s) { return npy_preamble({"<f4", false, std::move(s)}).size(); };
  EXPECT_EQ(size_of({0, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10}), 128u);
  // Room for the first dimension to grow to 21 digits pushes this one past 128.
  EXPECT_EQ(size_of({2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}), 192u);
  // Already aligned before padding: numpy still pads 64 spaces, not 0.
  EXPECT_EQ(size_of({0, 10, 10, 10, 10, 10, 10, 10, 10, 10, 100}), 192u);
}

TEST(NpyHeader, PreambleFallsBackToVersion2ForHugeHeaders) {
  Shape many(25000, 1);  // "(1, 1, ...)": 75000 characters, more than 1.0 allows
  many.push_back(2);
  std::string pre = npy_preamble({"<f4", false, many});
  EXPECT_EQ(pre[6], 2);
  EXPECT_EQ(pre.size() % 64, 0u);
  NpyHeader h = parse_npy_dict(pre.substr(12), "big");
  EXPECT_EQ(h.shape, many);
}

TEST(NpyHeader, ParsesWhatOtherWritersProduce) {
  struct Case {
    const char* dict;
    const char* descr;
    bool fortran;
    Shape shape;
  };
  const Case cases[] = {
      {"{'shape': (2, 3), 'fortran_order': False, 'descr': '<f4'}", "<f4", false, {2, 3}},
      {"{\"descr\": \"<i8\", \"fortran_order\": True, \"shape\": (4,)}", "<i8", true, {4}},
      {"  {  'descr' :'|b1' ,'fortran_order':False,'shape':(2,3,) ,  }  \n", "|b1", false, {2, 3}},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (3L, 2L), }", "<f8", false, {3, 2}},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (), }\t\r\n", "<f8", false, {}},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (5), }", "<f8", false, {5}},
      {"{'descr':'<f2','fortran_order':False,'shape':(0,)}", "<f2", false, {0}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.dict);
    NpyHeader h = parse_npy_dict(c.dict, "x.npy");
    EXPECT_EQ(h.descr, c.descr);
    EXPECT_EQ(h.fortran_order, c.fortran);
    EXPECT_EQ(h.shape, c.shape);
  }
}

TEST(NpyHeader, DescrByteOrders) {
  EXPECT_EQ(dtype_from_npy_descr("<f4", std::nullopt, "x"), DType::f32);
  EXPECT_EQ(dtype_from_npy_descr("=f8", std::nullopt, "x"), DType::f64);
  EXPECT_EQ(dtype_from_npy_descr("|f2", std::nullopt, "x"), DType::f16);
  EXPECT_EQ(dtype_from_npy_descr("i4", std::nullopt, "x"), DType::i32);
  EXPECT_EQ(dtype_from_npy_descr("<b1", std::nullopt, "x"), DType::boolean);
  EXPECT_EQ(dtype_from_npy_descr(">b1", std::nullopt, "x"), DType::boolean);  // one byte
  EXPECT_EQ(dtype_from_npy_descr("<u2", DType::bf16, "x"), DType::bf16);
  EXPECT_EQ(dtype_from_npy_descr("=u2", DType::bf16, "x"), DType::bf16);
  for (DType d : kAll) EXPECT_EQ(dtype_from_npy_descr(npy_descr(d), d, "x"), d);
}

TEST(Npy, ReadsHandMadeFiles) {
  NpyTempDir dir;
  const std::string p = dir.path("h.npy");
  // Version 2.0 and an unaligned header (old numpy aligned to 16, others not at all).
  const float f[3] = {1.5f, -2.0f, 0.25f};
  const std::string fdata(reinterpret_cast<const char*>(f), sizeof f);
  for (int major : {1, 2, 3}) {
    write_raw_npy(p, major, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}\n", fdata);
    Tensor t = read_npy(p);
    ASSERT_EQ(t.sizes(), Shape{3});
    EXPECT_EQ(t.data<float>()[1], -2.0f);
  }
  // Fortran order: stored column-major, returned in C order.
  const int32_t col_major[6] = {0, 3, 1, 4, 2, 5};  // logical [[0, 1, 2], [3, 4, 5]]
  write_raw_npy(p, 1, "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }\n",
                std::string(reinterpret_cast<const char*>(col_major), sizeof col_major));
  Tensor t = read_npy(p, DType::i32);
  ASSERT_EQ(t.sizes(), (Shape{2, 3}));
  for (int i = 0; i < 6; ++i) EXPECT_EQ(t.data<int32_t>()[i], i);
  // numpy reads any nonzero byte as True; a C++ bool must hold 0 or 1.
  write_raw_npy(p, 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }\n",
                std::string("\x00\x02\xff", 3));
  Tensor b = read_npy(p);
  EXPECT_EQ(std::string(static_cast<const char*>(b.data_ptr()), 3), std::string("\x00\x01\x01", 3));
}

// Counts the storages it hands out, to see that read_npy uses the thread's allocator.
class CountingAllocator : public Allocator {
 public:
  std::shared_ptr<Storage> allocate(size_t nbytes) override {
    ++count;
    return regular_allocator().allocate(nbytes);
  }
  int count = 0;
};

TEST(Npy, ReadAllocatesFromTheThreadsAllocator) {
  NpyTempDir dir;
  const std::string p = dir.path("a.npy");
  const int64_t col_major[4] = {1, 3, 2, 4};
  write_raw_npy(p, 1, "{'descr': '<i8', 'fortran_order': True, 'shape': (2, 2), }\n",
                std::string(reinterpret_cast<const char*>(col_major), sizeof col_major));
  CountingAllocator counting;
  {
    AllocatorGuard guard(counting);
    Tensor t = read_npy(p);
    EXPECT_EQ(t.data<int64_t>()[1], 2);
  }
  EXPECT_EQ(counting.count, 1);  // the tensor only; the reordering buffer is not a tensor
}

TEST(NpyErrors, FileProblems) {
  NpyTempDir dir;
  const std::string p = dir.path("e.npy");
  expect_error([&] { read_npy(dir.path("missing.npy")); },
               {"read_npy", "missing.npy", "No such file or directory"});
  write_bytes(p, "");
  expect_error([&] { read_npy(p); }, {p, "truncated", "0 bytes"});
  write_bytes(p, "\x93NUM");
  expect_error([&] { read_npy(p); }, {p, "truncated", "4 bytes"});
  write_bytes(p, "PK\x03\x04 this is a zip");
  expect_error([&] { read_npy(p); }, {p, "not a .npy file", "expected the magic", "PK\\x03\\x04"});
  write_bytes(p, std::string("\x93NUMPY\x04\x00\x10\x00", 10));
  expect_error([&] { read_npy(p); }, {p, "version 4.0", "expected 1.0, 2.0 or 3.0"});
  write_bytes(p, std::string("\x93NUMPY\x01\x00\x76\x00{'descr'", 17));
  expect_error([&] { read_npy(p); }, {p, "truncated header", "118 header bytes", "has 7"});
  write_bytes(p, std::string("\x93NUMPY\x02\x00\x76", 9));
  expect_error([&] { read_npy(p); }, {p, "truncated"});
  expect_error([&] { read_npy(dir.dir().string()); }, {"expected a regular file"});
}

TEST(NpyErrors, SizeMismatch) {
  NpyTempDir dir;
  const std::string p = dir.path("s.npy");
  const char* dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n";
  write_raw_npy(p, 1, dict, std::string(20, '\0'));
  expect_error([&] { read_npy(p); },
               {p, "truncated data", "f32[2, 3]", "needs 24 bytes", "has 20"});
  write_raw_npy(p, 1, dict, std::string(28, '\0'));
  expect_error([&] { read_npy(p); },
               {p, "size mismatch", "needs 24 bytes", "has 28", "4 bytes too many"});
  write_raw_npy(
      p, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", "");
  expect_error([&] { read_npy(p); }, {p, "too large"});
  // 5 * 10^18 two-byte elements: 10^19 bytes fit in uint64 but not in a tensor (int64).
  write_raw_npy(p, 1, "{'descr': '<f2', 'fortran_order': False, 'shape': (100000000000000000, 50), }", "");
  expect_error([&] { read_npy(p); },
               {p, "shape (100000000000000000, 50) is too large", "5000000000000000000 * 2 overflows"});
}

TEST(NpyErrors, BinaryBytesInTheHeaderAreEscaped) {
  using namespace std::string_literals;
  NpyTempDir dir;
  const std::string p = dir.path("b.npy");
  write_raw_npy(p, 1, "{'descr': '<f4\0\xff', 'fortran_order': False, 'shape': (1,), }"s, std::string(4, '\0'));
  const std::string msg = testing::error_of([&] { read_npy(p); });
  EXPECT_NE(msg.find("unsupported dtype descr '<f4\\x00\\xff'"), std::string::npos) << msg;
  write_raw_npy(p, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }\x01\0"s, std::string(4, '\0'));
  const std::string junk = testing::error_of([&] { read_npy(p); });
  EXPECT_NE(junk.find("found '\\x01\\x00'"), std::string::npos) << junk;
  EXPECT_EQ(junk.find('\0'), std::string::npos);
}

TEST(NpyErrors, Descr) {
  NpyTempDir dir;
  const std::string p = dir.path("d.npy");
  auto with_descr = [&](const char* descr) {
    write_raw_npy(p, 1,
                  fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': (1,), }}", descr),
                  std::string(8, '\0'));
  };
  with_descr("<c8");
  expect_error([&] { read_npy(p); }, {p, "unsupported dtype descr '<c8'", "expected one of"});
  with_descr(">f4");
  expect_error([&] { read_npy(p); }, {p, "'>f4'", "big-endian", "only little-endian"});
  with_descr(">u2");
  expect_error([&] { read_npy(p, DType::bf16); }, {p, "'>u2'", "big-endian"});
  with_descr("<u2");
  expect_error([&] { read_npy(p); },
               {p, "'<u2'", "uint16", "read only as bf16 raw bits", "no dtype was expected"});
  expect_error([&] { read_npy(p, DType::f16); },
               {p, "read only as bf16", "dtype f16 was expected"});
  with_descr("<i8");
  expect_error([&] { read_npy(p, DType::i32); },
               {p, "expected dtype i32 (descr '<i4')", "found descr '<i8' (i64)"});
  write_raw_npy(p, 1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}", "");
  expect_error([&] { read_npy(p); }, {p, "structured dtypes are not supported"});
}

TEST(NpyErrors, MalformedHeaders) {
  NpyTempDir dir;
  const std::string p = dir.path("m.npy");
  struct Case {
    const char* dict;
    std::vector<std::string_view> parts;
  };
  const Case cases[] = {
      {"{'descr': '<f4', 'shape': (1,)}", {"no 'fortran_order' key", "expected 'descr'"}},
      {"{'descr': '<f4', 'fortran_order': False}", {"no 'shape' key"}},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1}",
       {"unexpected key 'extra'"}},
      {"{'descr': '<f4', 'descr': '<f4'}", {"key 'descr' appears twice"}},
      {"{'descr' '<f4'}", {"malformed header dict", "expected ':' after the key", "found ''<f4'"}},
      {"{'descr': '<f4', 'fortran_order': false, 'shape': (1,)}",
       {"expected True or False for 'fortran_order'"}},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}",
       {"expected a non-negative integer dimension"}},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': [1]}", {"expected a shape tuple"}},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x", {"only spaces"}},
      {"{'descr': '<f4", {"expected a closing quote"}},
      {"'descr': '<f4'", {"expected '{' opening the header dict"}},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)",
       {"expected ',' or '}'", "the end"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.dict);
    write_raw_npy(p, 1, c.dict, std::string(4, '\0'));
    const std::string msg = testing::error_of([&] { read_npy(p); });
    EXPECT_NE(msg.find(p), std::string::npos) << msg;
    for (std::string_view part : c.parts) EXPECT_NE(msg.find(part), std::string::npos) << msg;
  }
}

TEST(NpyErrors, Write) {
  NpyTempDir dir;
  const std::string p = dir.path("no/such/dir/w.npy");
  expect_error([&] { write_npy(p, patterned({2}, DType::f32)); },
               {"write_npy", p, "No such file or directory"});
  expect_error([&] { write_npy(dir.path("m.npy"), Tensor::meta({2}, DType::f32)); },
               {"write_npy", "m.npy", "meta tensor"});
  expect_error([&] { write_npy(dir.path("u.npy"), Tensor()); },
               {"write_npy", "u.npy", "undefined"});
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.dir()), {}), 0);
}

}  // namespace
}  // namespace symmflow::exec
