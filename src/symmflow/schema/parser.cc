// Recursive descent over SchemaLexer tokens, one method per grammar rule:
//
//   schema   := name '(' [arg (',' arg)*] ')' '->' returns
//   name     := [ident '::'] ident ['.' ident]
//   arg      := '*' | '...' | type ident ['=' default]
//   type     := base [alias] ('?' | '[' [int] ']' [alias])*
//   alias    := '(' sets ['!'] ['->' sets] ')'      sets := (ident | '*') ('|' ...)*
//   returns  := '...' | '(' [ret (',' ret)*] ')' | ret      ret := type [ident]
#include "symmflow/schema/parser.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "symmflow/schema/lexer.h"

namespace symmflow {

namespace {
using schema_detail::SchemaLexer;
using schema_detail::Token;
using K = SchemaType::Kind;

// A type as written, with the aliases that were attached to it.
struct AnnotatedType {
  SchemaType type = SchemaType::tensor();
  std::optional<AliasInfo> alias;
  std::optional<AliasInfo> elem_alias;
};

class Parser {
 public:
  Parser(std::string_view text, std::string_view default_ns) : lex_(text), default_ns_(default_ns) {}

  FunctionSchema schema() {
    FunctionSchema s;
    name(s);
    expect("(");
    arguments(s);
    expect("->");
    returns(s);
    expect_end();
    return s;
  }

  SchemaType type_only() {
    AnnotatedType t = type();
    if (t.alias || t.elem_alias)
      fail(lex_.peek(), "parse_type reads types without alias annotations");
    expect_end();
    return t.type;
  }

 private:
  [[noreturn]] void fail(const Token& at, const std::string& msg) { lex_.fail_at(at.pos, msg); }
  [[noreturn]] void fail_expected(std::string_view what) {
    fail(lex_.peek(), fmt::format("expected {} but found {}", what, lex_.peek().describe()));
  }
  void expect(std::string_view punct) {
    if (!lex_.peek().is(punct)) fail_expected(fmt::format("'{}'", punct));
    lex_.next();
  }
  bool accept(std::string_view punct) {
    if (!lex_.peek().is(punct)) return false;
    lex_.next();
    return true;
  }
  void expect_end() {
    if (lex_.peek().kind != Token::Kind::End) fail_expected("end of schema");
  }
  Token ident(std::string_view what) {
    if (!lex_.peek().is_ident()) fail_expected(what);
    return lex_.next();
  }

  void name(FunctionSchema& s) {
    Token first = ident("an operator name");
    if (accept("::")) {
      s.ns = first.text;
      s.name = ident("an operator name after '::'").text;
    } else {
      if (default_ns_.empty())
        fail(first, fmt::format("expected a namespace ('ns::{}') because no default namespace "
                                "was given", first.text));
      s.ns = std::string(default_ns_);
      s.name = first.text;
    }
    if (accept(".")) s.overload = ident("an overload name after '.'").text;
  }

  void arguments(FunctionSchema& s) {
    if (accept(")")) return;
    bool kwarg_only = false;
    while (true) {
      const Token& t = lex_.peek();
      if (t.is("*")) {
        if (kwarg_only) fail(t, "'*' (start of keyword-only arguments) appears twice");
        lex_.next();
        kwarg_only = true;
        if (lex_.peek().is(")")) fail_expected("a keyword-only argument after '*'");
      } else if (t.is("...")) {
        lex_.next();
        s.is_vararg = true;
        expect(")");  // varargs come last
        return;
      } else {
        s.arguments.push_back(argument(s, kwarg_only));
      }
      if (accept(")")) return;
      if (!lex_.peek().is(",")) fail_expected("',' or ')'");
      lex_.next();
    }
  }

  Argument argument(const FunctionSchema& s, bool kwarg_only) {
    Argument a;
    AnnotatedType t = type();
    a.type = t.type;
    a.alias = t.alias;
    a.elem_alias = t.elem_alias;
    a.kwarg_only = kwarg_only;
    Token n = ident("an argument name");
    if (s.find_argument(n.text)) fail(n, fmt::format("duplicate argument name '{}'", n.text));
    a.name = n.text;
    if (accept("=")) a.default_value = default_value(a.type);
    return a;
  }

  void returns(FunctionSchema& s) {
    if (accept("...")) {
      s.is_varret = true;
      return;
    }
    if (!accept("(")) {
      s.returns.push_back(return_value());
      return;
    }
    if (accept(")")) return;  // `-> ()`
    while (true) {
      s.returns.push_back(return_value());
      if (accept(")")) return;
      if (!lex_.peek().is(",")) fail_expected("',' or ')'");
      lex_.next();
    }
  }

  Return return_value() {
    AnnotatedType t = type();
    Return r{"", t.type, t.alias, t.elem_alias};
    if (lex_.peek().is_ident()) r.name = lex_.next().text;
    return r;
  }

  AnnotatedType type() {
    const Token& at = lex_.peek();
    if (!at.is_ident()) fail_expected("a type");
    auto base = base_type_from_name(at.text);
    if (!base) fail(at, fmt::format("unknown type '{}'", at.text));
    lex_.next();
    AnnotatedType t;
    t.type = SchemaType(*base);
    if (lex_.peek().is("(")) t.alias = alias();
    bool seen_list = false, seen_list_alias = false;
    while (true) {
      const Token& s = lex_.peek();
      if (s.is("?")) {
        if (t.type.is_optional()) fail(s, "'?' applied to a type that is already optional");
        lex_.next();
        t.type = SchemaType::optional(t.type);
      } else if (s.is("[")) {
        if (seen_list) fail(s, "nested list types are not supported");
        if (seen_list_alias) fail(s, "an alias annotation on a list must come last");
        lex_.next();
        std::optional<int64_t> size;
        if (lex_.peek().kind == Token::Kind::Int) size = int_value(lex_.next());
        expect("]");
        t.type = SchemaType::list(t.type, size);
        seen_list = true;
        // An alias written before `[]` was on the element.
        t.elem_alias = std::move(t.alias);
        t.alias.reset();
        if (lex_.peek().is("(")) {
          t.alias = alias();
          seen_list_alias = true;
        }
      } else {
        return t;
      }
    }
  }

  AliasInfo alias() {
    expect("(");
    AliasInfo a;
    a.before = alias_sets();
    a.is_write = accept("!");
    a.after = accept("->") ? alias_sets() : a.before;
    expect(")");
    return a;
  }

  std::vector<std::string> alias_sets() {
    std::vector<std::string> sets;
    do {
      const Token& t = lex_.peek();
      if (!t.is_ident() && !t.is("*")) fail_expected("an alias set name or '*'");
      sets.push_back(lex_.next().text);
    } while (accept("|"));
    return sets;
  }

  int64_t int_value(const Token& t) {
    errno = 0;
    long long v = std::strtoll(t.text.c_str(), nullptr, 10);
    if (errno == ERANGE) fail(t, fmt::format("integer '{}' does not fit in 64 bits", t.text));
    return v;
  }

  // One literal of a default; `elem` is the (list element or optional) type.
  DefaultValue literal(const SchemaType& elem) {
    const Token& t = lex_.peek();
    switch (t.kind) {
      case Token::Kind::Int: {
        Token n = lex_.next();
        return {IValue(int_value(n)), n.text};
      }
      case Token::Kind::Float: {
        Token n = lex_.next();
        return {IValue(std::strtod(n.text.c_str(), nullptr)), n.text};
      }
      case Token::Kind::String: {
        Token n = lex_.next();
        return {IValue(n.text), n.raw};
      }
      case Token::Kind::Ident: {
        Token n = lex_.next();
        if (n.text == "True") return {IValue(true), n.text};
        if (n.text == "False") return {IValue(false), n.text};
        if (n.text == "None") return {IValue(), n.text};
        if (n.text == "inf") return {IValue(INFINITY), n.text};
        if (n.text == "nan") return {IValue(NAN), n.text};
        DType d;
        if (elem.kind() == K::ScalarType && parse_dtype(n.text, &d)) return {IValue(d), n.text};
        return {IValue(n.text), n.text};  // enum-like: contiguous_format, Mean, ...
      }
      default:
        if (t.is("-")) {  // -inf
          lex_.next();
          if (lex_.peek().is_ident() && lex_.peek().text == "inf") {
            lex_.next();
            return {IValue(-INFINITY), "-inf"};
          }
          fail_expected("a number or 'inf' after '-'");
        }
        fail_expected("a default value");
    }
  }

  DefaultValue default_value(const SchemaType& type) {
    const SchemaType& t = type.is_optional() ? type.elem() : type;
    if (!lex_.peek().is("[")) return literal(t.is_list() ? t.elem() : t);
    lex_.next();
    const SchemaType& elem = t.is_list() ? t.elem() : t;
    IValueList values;
    std::vector<std::string> texts;
    if (!lex_.peek().is("]")) {
      while (true) {
        DefaultValue v = literal(elem);
        values.push_back(std::move(v.value));
        texts.push_back(std::move(v.text));
        if (accept("]")) break;
        if (!lex_.peek().is(",")) fail_expected("',' or ']' in a list default");
        lex_.next();
      }
    } else {
      lex_.next();
    }
    return {IValue(std::move(values)), fmt::format("[{}]", fmt::join(texts, ", "))};
  }

  SchemaLexer lex_;
  std::string_view default_ns_;
};
}  // namespace

FunctionSchema parse_schema(std::string_view text, std::string_view default_namespace) {
  return Parser(text, default_namespace).schema();
}

SchemaType parse_type(std::string_view text) { return Parser(text, "").type_only(); }

}  // namespace symmflow
