#include "symmflow/schema/lexer.h"

#include <cctype>

#include <fmt/format.h>

#include "symmflow/core/parse_limits.h"
#include "symmflow/core/printable.h"
#include "symmflow/schema/parser.h"

namespace symmflow::schema_detail {

namespace {
bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool digit(char c) { return c >= '0' && c <= '9'; }
}  // namespace

std::string Token::describe() const {
  switch (kind) {
    case Kind::End: return "end of schema";
    case Kind::String: return "string " + raw;
    default: return "'" + raw + "'";
  }
}

void SchemaLexer::fail_at(size_t pos, const std::string& msg) const {
  // Find the line holding pos, so multi-line schemas point at the right place.
  size_t line_start = 0;
  int line = 1;
  for (size_t i = 0; i < pos && i < src_.size(); ++i)
    if (src_[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  size_t line_end = src_.find('\n', line_start);
  if (line_end == std::string_view::npos) line_end = src_.size();
  int column = int(pos - line_start) + 1;
  // The line as printed (binary bytes escaped), the caret under the same byte.
  const std::string_view line_text = src_.substr(line_start, line_end - line_start);
  const size_t caret = printable(line_text.substr(0, pos - line_start)).size();
  std::string text = fmt::format("schema:{}:{}: {}\n{}\n{}^", line, column, printable(msg),
                                 printable(line_text), std::string(caret, ' '));
  throw SchemaParseError(text, line, column);
}

void SchemaLexer::advance() {
  while (pos_ < src_.size() && std::isspace(static_cast<unsigned char>(src_[pos_]))) ++pos_;
  tok_ = Token{};
  tok_.pos = pos_;
  if (pos_ >= src_.size()) return;  // End
  size_t start = pos_;
  char c = src_[pos_];
  char c1 = pos_ + 1 < src_.size() ? src_[pos_ + 1] : '\0';
  if (ident_start(c)) {
    while (pos_ < src_.size() && ident_char(src_[pos_])) ++pos_;
    tok_.kind = Token::Kind::Ident;
  } else if (digit(c) || (c == '-' && (digit(c1) || c1 == '.')) || (c == '.' && digit(c1))) {
    return lex_number(start);
  } else if (c == '\'' || c == '"') {
    return lex_string(start);
  } else {
    tok_.kind = Token::Kind::Punct;
    for (std::string_view p : {"->", "::", "..."})
      if (src_.substr(pos_, p.size()) == p) {
        pos_ += p.size();
        tok_.text = tok_.raw = std::string(p);
        return;
      }
    if (std::string_view("()[],*?!|=.-:").find(c) == std::string_view::npos)
      fail_at(start, fmt::format("unexpected character '{}'", c));
    ++pos_;
  }
  tok_.text = tok_.raw = std::string(src_.substr(start, pos_ - start));
  check_length();
}

void SchemaLexer::check_length() const {
  if (tok_.raw.size() > kMaxLiteralBytes)
    fail_at(tok_.pos, fmt::format("a token of {} bytes; the longest accepted is {}", tok_.raw.size(),
                                  kMaxLiteralBytes));
}

void SchemaLexer::lex_number(size_t start) {
  // [-] digits [. digits] [e [+-] digits]; anything glued on after that (a second
  // '.', a letter) makes the whole run a malformed number, reported at its start.
  bool is_float = false, ok = true;
  if (src_[pos_] == '-') ++pos_;
  auto digits = [&] {
    size_t b = pos_;
    while (pos_ < src_.size() && digit(src_[pos_])) ++pos_;
    return pos_ > b;
  };
  bool int_part = digits();
  if (pos_ < src_.size() && src_[pos_] == '.') {
    is_float = true;
    ++pos_;
    bool frac = digits();
    ok = int_part || frac;
  }
  if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
    is_float = true;
    ++pos_;
    if (pos_ < src_.size() && (src_[pos_] == '+' || src_[pos_] == '-')) ++pos_;
    ok = digits() && ok;
  }
  size_t end = pos_;
  while (pos_ < src_.size() && (ident_char(src_[pos_]) || src_[pos_] == '.')) ++pos_;
  if (!ok || pos_ != end)
    fail_at(start, fmt::format("malformed number '{}'", src_.substr(start, pos_ - start)));
  tok_.kind = is_float ? Token::Kind::Float : Token::Kind::Int;
  tok_.text = tok_.raw = std::string(src_.substr(start, pos_ - start));
  check_length();
}

void SchemaLexer::lex_string(size_t start) {
  char quote = src_[pos_++];
  std::string value;
  while (true) {
    if (pos_ >= src_.size()) fail_at(start, "unterminated string literal");
    char c = src_[pos_++];
    if (c == quote) break;
    if (c == '\\') {
      if (pos_ >= src_.size()) fail_at(start, "unterminated string literal");
      char e = src_[pos_++];
      switch (e) {
        case 'n': value += '\n'; break;
        case 't': value += '\t'; break;
        default: value += e;  // \\, \', \"
      }
    } else {
      value += c;
    }
  }
  tok_.kind = Token::Kind::String;
  tok_.text = std::move(value);
  tok_.raw = std::string(src_.substr(start, pos_ - start));
  check_length();
}

}  // namespace symmflow::schema_detail
