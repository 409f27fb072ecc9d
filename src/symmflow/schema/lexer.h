// SchemaLexer: splits schema text into tokens for the parser. Internal to schema/.
// It knows columns, so every error (its own and the parser's) points at one.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace symmflow::schema_detail {

struct Token {
  enum class Kind { Ident, Int, Float, String, Punct, End };
  Kind kind = Kind::End;
  std::string text;   // source spelling; for String the unescaped contents
  std::string raw;    // source spelling including quotes
  size_t pos = 0;     // offset of the first character in the source

  bool is(std::string_view punct) const { return kind == Kind::Punct && text == punct; }
  bool is_ident() const { return kind == Kind::Ident; }
  std::string describe() const;  // "','", "'Tensor'", "end of schema"
};

class SchemaLexer {
 public:
  explicit SchemaLexer(std::string_view src) : src_(src) { advance(); }

  const Token& peek() const { return tok_; }
  Token next() {
    Token t = tok_;
    advance();
    return t;
  }
  std::string_view source() const { return src_; }

  // Throws SchemaParseError for `msg` at source offset `pos`.
  [[noreturn]] void fail_at(size_t pos, const std::string& msg) const;

 private:
  void advance();
  void lex_number(size_t start);
  void lex_string(size_t start);
  void check_length() const;  // a token past kMaxLiteralBytes is an error

  std::string_view src_;
  size_t pos_ = 0;
  Token tok_;
};

}  // namespace symmflow::schema_detail
