// The .npy header dict, written as np.save writes it and parsed with a small
// recursive-descent reader (see npy_header.h). Usage: parse_npy_dict(text, path).
#include "symmflow/exec/npy_header.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>

#include "symmflow/core/error.h"
#include "symmflow/core/printable.h"

namespace symmflow::exec {

namespace {

// The header dict is a Python literal; this reads the small subset numpy writes
// (and older writers such as Python 2 numpy or cnpy): strings, True/False and
// tuples of non-negative integers.
class DictParser {
 public:
  DictParser(std::string_view text, const std::string& path) : s_(text), path_(path) {}

  NpyHeader parse() {
    NpyHeader h;
    bool seen[3] = {false, false, false};
    skip_ws();
    expect('{', "'{' opening the header dict");
    skip_ws();
    while (!eat('}')) {
      std::string key = string_literal("a quoted key");
      skip_ws();
      expect(':', "':' after the key");
      skip_ws();
      int slot = key == "descr" ? 0 : key == "fortran_order" ? 1 : key == "shape" ? 2 : -1;
      SF_CHECK(slot >= 0,
               "read_npy {}: unexpected key '{}' in the header (a .npy header has exactly "
               "'descr', 'fortran_order' and 'shape'; found in: {})",
               path_, printable(key), shown());
      SF_CHECK(!seen[slot], "read_npy {}: key '{}' appears twice in the header: {}", path_, key,
               shown());
      seen[slot] = true;
      if (slot == 0) {
        SF_CHECK(peek() != '[',
                 "read_npy {}: structured dtypes are not supported (expected a descr such as "
                 "'<f4', found a field list in: {})",
                 path_, shown());
        h.descr = string_literal("the descr string");
      } else if (slot == 1) {
        h.fortran_order = boolean();
      } else {
        h.shape = tuple();
      }
      skip_ws();
      if (eat(',')) {
        skip_ws();
        continue;
      }
      skip_ws();
      expect('}', "',' or '}' after a value");
      break;
    }
    skip_ws();
    if (pos_ != s_.size()) malformed("only spaces and '\\n' after the dict");
    const char* names[3] = {"descr", "fortran_order", "shape"};
    for (int i = 0; i < 3; ++i)
      SF_CHECK(seen[i],
               "read_npy {}: the header has no '{}' key (expected 'descr', "
               "'fortran_order' and 'shape'; found: {})",
               path_, names[i], shown());
    return h;
  }

 private:
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  bool eat(char c) {
    if (peek() != c || pos_ >= s_.size()) return false;
    ++pos_;
    return true;
  }
  void skip_ws() {
    while (pos_ < s_.size() && std::strchr(" \t\r\n", s_[pos_]) != nullptr) ++pos_;
  }
  void expect(char c, std::string_view what) {
    if (!eat(c)) malformed(what);
  }
  // The header as text for messages, without the trailing padding.
  std::string shown() const {
    std::string_view t = s_;
    while (!t.empty() && std::strchr(" \t\r\n", t.back()) != nullptr) t.remove_suffix(1);
    if (t.size() > 200) return fmt::format("{}...", printable(t.substr(0, 200)));
    return printable(t);
  }
  [[noreturn]] void malformed(std::string_view expected) const {
    std::string found = pos_ < s_.size() ? fmt::format("'{}'", printable(s_.substr(pos_, 12))) : "the end";
    fail("read_npy {}: malformed header dict at character {}: expected {}, found {} (header: {})",
         path_, pos_, expected, found, shown());
  }

  std::string string_literal(std::string_view what) {
    char q = peek();
    if (q != '\'' && q != '"') malformed(what);
    ++pos_;
    size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] != q) {
      // Keys and descrs never need escapes; refusing them keeps the parser small.
      if (s_[pos_] == '\\') malformed("a string without backslash escapes");
      ++pos_;
    }
    if (pos_ >= s_.size()) malformed("a closing quote");
    ++pos_;
    return std::string(s_.substr(start, pos_ - 1 - start));
  }

  bool boolean() {
    if (s_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (s_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    malformed("True or False for 'fortran_order'");
  }

  int64_t integer() {
    size_t start = pos_;
    int64_t v = 0;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
      if (pos_ - start >= 18) malformed("a dimension below 10^18");
      v = v * 10 + (s_[pos_] - '0');
      ++pos_;
    }
    if (pos_ == start) malformed("a non-negative integer dimension");
    if (peek() == 'L' || peek() == 'l') ++pos_;  // Python 2 long
    return v;
  }

  // "(2, 3)", "(4,)", "()"; a lone "(4)" (an int in Python) is taken as (4,).
  Shape tuple() {
    expect('(', "a shape tuple '(...)'");
    Shape out;
    skip_ws();
    while (!eat(')')) {
      out.push_back(integer());
      skip_ws();
      if (eat(',')) {
        skip_ws();
        continue;
      }
      expect(')', "',' or ')' in the shape tuple");
      break;
    }
    return out;
  }

  std::string_view s_;
  const std::string& path_;
  size_t pos_ = 0;
};

}  // namespace

std::string npy_descr(DType t) {
  switch (t) {
    case DType::f32: return "<f4";
    case DType::f64: return "<f8";
    case DType::f16: return "<f2";
    case DType::bf16: return "<u2";
    case DType::i32: return "<i4";
    case DType::i64: return "<i8";
    case DType::boolean: return "|b1";
  }
  fail("npy_descr: unknown dtype {}", int(t));
}

std::string npy_shape_repr(const Shape& shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

std::string npy_preamble(const NpyHeader& h) {
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': {}, 'shape': {}, }}", h.descr,
                                 h.fortran_order ? "True" : "False", npy_shape_repr(h.shape));
  // numpy leaves room for the growth axis to reach 21 digits, so that appending
  // along it can rewrite the header in place; copying it keeps np.save's bytes.
  if (!h.shape.empty()) {
    size_t digits = fmt::formatted_size("{}", h.fortran_order ? h.shape.back() : h.shape.front());
    if (digits < 21) dict.append(21 - digits, ' ');
  }
  for (int major : {1, 2}) {
    const size_t prefix = 6 + 2 + (major == 1 ? 2 : 4);  // magic, version, length
    const size_t hlen = dict.size() + 1;                 // + '\n'
    // As numpy: 1..64 spaces (64 rather than 0 when already aligned).
    const size_t pad = 64 - (prefix + hlen) % 64;
    const size_t len = hlen + pad;
    if (major == 1 && len > 0xffff) continue;
    std::string out(kNpyMagic);
    out.push_back(char(major));
    out.push_back(0);
    for (size_t b = 0; b < prefix - 8; ++b) out.push_back(char((len >> (8 * b)) & 0xff));
    out += dict;
    out.append(pad, ' ');
    out.push_back('\n');
    return out;
  }
  fail("npy_preamble: a header of {} bytes does not fit a .npy file", dict.size());
}

NpyHeader parse_npy_dict(std::string_view text, const std::string& path) {
  return DictParser(text, path).parse();
}

DType dtype_from_npy_descr(std::string_view descr, std::optional<DType> expect,
                           const std::string& path) {
  std::string_view code = descr;
  char order = '=';
  if (!code.empty() && std::strchr("<>|=", code[0]) != nullptr) {
    order = code[0];
    code.remove_prefix(1);
  }
  struct Known {
    std::string_view code;
    DType dtype;
  };
  static constexpr Known kKnown[] = {{"f4", DType::f32}, {"f8", DType::f64}, {"f2", DType::f16},
                                     {"i4", DType::i32}, {"i8", DType::i64}, {"b1", DType::boolean},
                                     {"u2", DType::bf16}};
  const Known* k = nullptr;
  for (const Known& c : kKnown)
    if (c.code == code) k = &c;
  SF_CHECK(k != nullptr,
           "read_npy {}: unsupported dtype descr '{}' (expected one of <f4 <f8 <f2 <i4 <i8 |b1, "
           "or <u2 holding bf16 bits)",
           path, printable(descr));
  // One-byte types have no byte order, whatever character precedes them.
  SF_CHECK(order != '>' || element_size(k->dtype) == 1,
           "read_npy {}: descr '{}' is big-endian; only little-endian files are read (in numpy: "
           "a.astype(a.dtype.newbyteorder('<')))",
           path, descr);
  if (k->dtype == DType::bf16)
    SF_CHECK(expect == DType::bf16,
             "read_npy {}: descr '{}' is uint16, which is read only as bf16 raw bits, and {}", path,
             descr,
             expect ? fmt::format("dtype {} was expected", dtype_name(*expect))
                    : std::string("no dtype was expected"));
  SF_CHECK(!expect || *expect == k->dtype,
           "read_npy {}: expected dtype {} (descr '{}'), found descr '{}' ({})", path,
           dtype_name(*expect), npy_descr(*expect), descr, dtype_name(k->dtype));
  return k->dtype;
}

}  // namespace symmflow::exec
