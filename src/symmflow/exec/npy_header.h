// The header of a numpy .npy file, apart from any file I/O so that it can be
// tested on strings: the dict `{'descr': '<f4', 'fortran_order': False,
// 'shape': (2, 3), }` and the mapping between numpy's descr and our DType.
// npy.h builds the file functions on top of these.
//
//   std::string pre = npy_preamble({"<f4", false, {2, 3}});  // magic..'\n', 64-aligned
//   NpyHeader h = parse_npy_dict("{'shape': (4,), 'descr': '<i8', 'fortran_order': False}",
//                                "a.npy");
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "symmflow/core/dtype.h"
#include "symmflow/core/shape.h"

namespace symmflow::exec {

struct NpyHeader {
  std::string descr;  // numpy's dtype.str, e.g. "<f4", "|b1"
  bool fortran_order = false;
  Shape shape;
};

// The 6 magic bytes every .npy file starts with.
inline constexpr std::string_view kNpyMagic{"\x93NUMPY", 6};

// numpy's descr for t: "<f4", "<f8", "<f2", "<i4", "<i8", "|b1", and "<u2" for bf16
// (numpy has no bfloat16; the raw bits are stored as uint16).
std::string npy_descr(DType t);
// Python's repr of a shape tuple: "()", "(4,)", "(2, 3)".
std::string npy_shape_repr(const Shape& shape);

// Everything before the data: magic, version, header length and the dict, padded
// with spaces and ended by '\n' so the data starts at a multiple of 64 bytes. The
// layout is np.save's (numpy >= 1.23), byte for byte: version 1.0 unless the dict
// needs more than 65535 bytes (then 2.0).
std::string npy_preamble(const NpyHeader& h);

// Parses the header dict (the text after the length field, padding included).
// Accepts any key order, spaces, ' or " quotes, a trailing comma, Python 2's `3L`.
// Errors name `path` and what was expected and found.
NpyHeader parse_npy_dict(std::string_view text, const std::string& path);

// The DType that a descr stands for. Little-endian ('<', '=', '|' or no order
// character) only: big-endian is an Error. "<u2" is bf16 raw bits, accepted only
// when expect == bf16. When expect is given the result must equal it (no
// conversion happens on read).
DType dtype_from_npy_descr(std::string_view descr, std::optional<DType> expect,
                           const std::string& path);

}  // namespace symmflow::exec
