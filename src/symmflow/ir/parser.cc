#include "symmflow/ir/parser.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <utility>

#include "symmflow/core/parse_limits.h"
#include "symmflow/core/printable.h"
#include "symmflow/ir/printer.h"

namespace symmflow::ir {

namespace {

enum class Tok { End, Value, Ident, Int, Float, String, Punct };

struct Token {
  Tok kind = Tok::End;
  std::string text;  // the spelling; for String the unescaped contents
  SourceLoc loc;
};

class Lexer {
 public:
  Lexer(std::string_view s, const std::string& file) : s_(s), file_(file) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    for (;;) {
      skip_space();
      Token t;
      t.loc = {line_, col()};
      if (i_ >= s_.size()) {
        out.push_back(t);
        return out;
      }
      char c = s_[i_];
      // `%` after an operand is modulo (`(rank+1)%world`), else a value's sigil.
      bool after_operand = !out.empty() && out.back().loc.line == line_ && (out.back().kind == Tok::Int ||
                                            (out.back().kind == Tok::Punct && out.back().text == ")") ||
                                            (out.back().kind == Tok::Ident &&
                                             (out.back().text == "rank" || out.back().text == "world")));
      if (c == '%' && !after_operand) {
        ++i_;
        size_t b = i_;
        while (i_ < s_.size() && (std::isalnum(uchar(s_[i_])) || s_[i_] == '_' || s_[i_] == '.')) ++i_;
        if (b == i_) error(t.loc, "expected a value name after '%'");
        t.kind = Tok::Value;
        t.text = std::string(s_.substr(b, i_ - b));
      } else if (std::isalpha(uchar(c)) || c == '_') {
        size_t b = i_;
        while (i_ < s_.size() && (std::isalnum(uchar(s_[i_])) || s_[i_] == '_')) ++i_;
        t.kind = Tok::Ident;
        t.text = std::string(s_.substr(b, i_ - b));
      } else if (std::isdigit(uchar(c))) {
        size_t b = i_;
        bool is_float = false;
        while (i_ < s_.size() && std::isdigit(uchar(s_[i_]))) ++i_;
        if (i_ < s_.size() && s_[i_] == '.' && s_.substr(i_, 2) != "..") {  // `1..3` is a rank range
          is_float = true;
          ++i_;
          while (i_ < s_.size() && std::isdigit(uchar(s_[i_]))) ++i_;
        }
        if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
          is_float = true;
          ++i_;
          if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
          if (i_ >= s_.size() || !std::isdigit(uchar(s_[i_]))) error({line_, col()}, "expected an exponent");
          while (i_ < s_.size() && std::isdigit(uchar(s_[i_]))) ++i_;
        }
        t.kind = is_float ? Tok::Float : Tok::Int;
        t.text = std::string(s_.substr(b, i_ - b));
      } else if (c == '"') {
        ++i_;
        t.kind = Tok::String;
        for (;;) {
          if (i_ >= s_.size() || s_[i_] == '\n') error(t.loc, "unterminated string");
          char d = s_[i_++];
          if (d == '"') break;
          if (d == '\\') {
            if (i_ >= s_.size()) error(t.loc, "unterminated string");
            d = s_[i_++];
            if (d != '"' && d != '\\')
              error({line_, col() - 1}, "unknown escape '\\{}' (only \\\" and \\\\)", std::string_view(&d, 1));
          }
          t.text += d;
        }
      } else if (s_.substr(i_, 2) == "::" || s_.substr(i_, 2) == "->" || s_.substr(i_, 2) == "..") {
        t.kind = Tok::Punct;
        t.text = std::string(s_.substr(i_, 2));
        i_ += 2;
      } else if (std::string_view("()[]{},:=@+-*/%.").find(c) != std::string_view::npos) {
        t.kind = Tok::Punct;
        t.text = std::string(1, c);
        ++i_;
      } else {
        error(t.loc, "unexpected character '{}'", std::string_view(&s_[i_], 1));
      }
      if (t.text.size() > kMaxLiteralBytes)
        error(t.loc, "a token of {} bytes; the longest accepted is {}", t.text.size(), kMaxLiteralBytes);
      out.push_back(std::move(t));
    }
  }

  template <typename... A>
  [[noreturn]] void error(SourceLoc l, fmt::format_string<A...> f, A&&... a) {
    throw ParseError(printable(fmt::format("{}:{}:{}: {}", file_, l.line, l.col, fmt::format(f, std::forward<A>(a)...))));
  }

 private:
  static unsigned char uchar(char c) { return static_cast<unsigned char>(c); }
  int col() const { return int(i_ - line_start_) + 1; }
  void skip_space() {
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == '\n') {
        ++line_;
        line_start_ = ++i_;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++i_;
      } else if (c == '#') {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      } else {
        break;
      }
    }
  }
  std::string_view s_;
  const std::string& file_;
  size_t i_ = 0, line_start_ = 0;
  int line_ = 1;
};

class Parser {
 public:
  Parser(std::vector<Token> toks, const ParseOptions& o) : t_(std::move(toks)), o_(o) {}

  // The graph for o_.rank: the file's only graph, or the one whose rank set holds it.
  std::unique_ptr<Graph> run() {
    std::unique_ptr<Graph> mine;
    for (auto& block : blocks(/*all=*/false))
      if (block) mine = std::move(block);
    return mine;
  }

  // Every graph of the file, each parsed for the first rank of its set (a graph
  // whose set is empty in this world is left out).
  std::vector<std::unique_ptr<Graph>> run_all() {
    std::vector<std::unique_ptr<Graph>> out;
    for (auto& block : blocks(/*all=*/true))
      if (block) out.push_back(std::move(block));
    return out;
  }

 private:
  // One graph, or several with rank sets that hold no rank twice (and o_.rank
  // once). A graph not parsed (not this rank's, or empty here) is a nullptr.
  std::vector<std::unique_ptr<Graph>> blocks(bool all) {
    struct Seen {
      std::string name;
      SourceLoc loc;
      RankSet set;
    };
    std::vector<Seen> seen;
    std::vector<std::unique_ptr<Graph>> out;
    do {
      SourceLoc gl = peek().loc;
      expect_ident("graph");
      expect("@");
      std::string name = take(Tok::Ident, "a graph name").text;
      if (!(peek().kind == Tok::Ident && peek().text == "ranks")) {
        if (!seen.empty())
          error(gl, "graph @{} has no rank set: in a file of several graphs each one says which ranks run it "
                    "(`graph @{} ranks 1 (...)`, docs/ir.md)", name, name);
        out.push_back(graph(name, nullptr, o_.rank));
        if (peek().kind != Tok::End)
          error(peek().loc, "expected end of file after the graph, found {} (a file of several graphs gives "
                            "each one a rank set: `graph @{} ranks 0 (...)`)", describe(peek()), name);
        return out;
      }
      SourceLoc sl = next().loc;
      RankSet set = rank_set();
      for (const Seen& s : seen)
        for (int r = 0; r < o_.world; ++r)
          if (s.set.contains(r, o_.world) && set.contains(r, o_.world))
            error(sl, "rank {} (world {}) would run two graphs: @{} (line {}) and @{}; each rank runs exactly one",
                  r, o_.world, s.name, s.loc.line, name);
      const int64_t first = set.first_rank(o_.world);
      const bool parse = all ? first >= 0 : set.contains(o_.rank, o_.world);
      seen.push_back({name, gl, set});
      if (parse) {
        out.push_back(graph(name, &seen.back().set, all ? int(first) : o_.rank));
      } else {
        out.push_back(nullptr);
        skip_graph();
      }
    } while (peek().kind != Tok::End);
    // The rank being parsed must run one (a printed graph of one rank parses back
    // for that rank alone; `symmflow run` parses the file for every rank).
    bool any = all;
    for (const Seen& s : seen) any |= s.set.contains(o_.rank, o_.world);
    if (!any) {
      std::vector<std::string> sets;
      for (const Seen& s : seen) sets.push_back(fmt::format("@{} ranks {} (line {})", s.name, s.set.str(), s.loc.line));
      error(seen.front().loc, "rank {} (world {}) runs no graph: no rank set holds it ({}); add it to one", o_.rank,
            o_.world, fmt::join(sets, ", "));
    }
    return out;
  }

  // `ranks` items: INTEXPR or INTEXPR '..' INTEXPR over `world`, separated by ','.
  RankSet rank_set() {
    RankSet set;
    do {
      SourceLoc l = peek().loc;
      RankSet::Item item{int_expr(0), nullptr};
      if (accept("..")) item.last = int_expr(0);
      for (const auto& e : {item.first, item.last}) {
        if (e && e->uses_rank())
          error(l, "a rank set is written over `world` only, not `rank` (found {})", e->to_string());
      }
      int64_t a = 0, b = 0;
      try {
        a = item.first->eval(0, o_.world), b = item.last ? item.last->eval(0, o_.world) : a;
      } catch (const Error& e) {
        error(l, "{}", e.what());
      }
      if (a <= b && (a < 0 || b >= o_.world))
        error(l, "rank set item {} is {} in a world of {}: ranks are 0..{}",
              item.last ? item.first->to_string() + ".." + item.last->to_string() : item.first->to_string(),
              a == b ? fmt::format("rank {}", a) : fmt::format("ranks {}..{}", a, b), o_.world, o_.world - 1);
      set.items.push_back(std::move(item));
    } while (accept(","));
    return set;
  }

  // Another rank's graph: skipped up to its closing brace (its rank parses it).
  void skip_graph() {
    while (peek().kind != Tok::End && !at("{")) next();
    expect("{");
    while (peek().kind != Tok::End && !at("}")) next();
    expect("}");
  }

  std::unique_ptr<Graph> graph(const std::string& name, const RankSet* set, int rank) {
    rank_ = rank;
    user_named_.clear();
    g_ = std::make_unique<Graph>(name, rank, o_.world);
    g_->set_file(o_.file);
    if (set) g_->set_rank_set(*set);
    expect("(");
    if (!at(")")) {
      do {
        Token v = take(Tok::Value, "a parameter (%name)");
        expect(":");
        SourceLoc tl = peek().loc;
        if (g_->find_value(v.text)) error(v.loc, "parameter %{} is declared twice", v.text);
        auto [kind, type] = parse_type(/*scalars=*/true);
        (void)tl;
        if (kind == ValueKind::Tensor) g_->add_input(v.text, type);
        else g_->add_scalar_input(v.text, kind);
      } while (accept(","));
    }
    expect(")");
    expect("->");
    expect("(");
    std::vector<TensorType> rets;
    std::vector<SourceLoc> ret_locs;
    if (!at(")")) {
      do {
        ret_locs.push_back(peek().loc);
        rets.push_back(parse_type(false).second);
      } while (accept(","));
    }
    expect(")");
    g_->set_output_types(rets);
    expect("{");
    for (;;) {
      if (peek().kind == Tok::Ident && peek().text == "return") {
        SourceLoc rl = next().loc;
        std::vector<Value*> outs;
        std::vector<SourceLoc> locs;
        if (peek().kind == Tok::Value) {
          do {
            locs.push_back(peek().loc);
            outs.push_back(use_value(take(Tok::Value, "a value")));
          } while (accept(","));
        }
        if (outs.size() != rets.size())
          error(rl, "return gives {} value{} but the signature declares {}", outs.size(),
                outs.size() == 1 ? "" : "s", rets.size());
        for (size_t i = 0; i < outs.size(); ++i) {
          if (!outs[i]->is_tensor()) error(locs[i], "return value {} is a scalar; only tensors are returned", i);
          const auto& t = outs[i]->type();
          if (t.dtype != rets[i].dtype || t.sizes != rets[i].sizes)
            error(locs[i], "return value {} (%{}) is {} but the signature says {}", i,
                  outs[i]->name(), t.str(), rets[i].str());
        }
        g_->set_outputs(outs);
        expect("}");
        return std::move(g_);
      }
      if (peek().kind == Tok::End || at("}"))
        error(peek().loc, "expected a statement or 'return', found {}", describe(peek()));
      statement();
    }
  }

  // --- statements ------------------------------------------------------------
  void statement() {
    std::vector<Token> names;
    if (peek().kind == Tok::Value) {
      do names.push_back(take(Tok::Value, "a result name (%name)"));
      while (accept(","));
      expect("=");
    }
    bool functional = false;
    if (peek().kind == Tok::Ident && peek().text == "functional") {
      next();
      functional = true;
    }
    SourceLoc op_loc = peek().loc;
    std::string op = take(Tok::Ident, "an op (ns::name)").text;
    expect("::");
    op += "::" + take(Tok::Ident, "an op name").text;
    if (accept(".")) op += "." + take(Tok::Ident, "an overload name").text;
    expect("(");
    CallArgs call;
    if (!at(")")) {
      do {
        if (peek().kind == Tok::Ident && peek(1).kind == Tok::Punct && peek(1).text == "=") {
          Token k = next();
          next();
          for (const auto& [name, a] : call.keywords)
            if (name == k.text) error(k.loc, "keyword argument '{}' is given twice", k.text);
          call.keywords.emplace_back(k.text, parse_expr());
        } else {
          if (!call.keywords.empty()) error(peek().loc, "positional argument after keyword arguments");
          call.positional.push_back(parse_expr());
        }
      } while (accept(","));
    }
    expect(")");
    std::vector<std::string> out_names;
    for (const auto& n : names) {
      if (Value* prev = g_->find_value(n.text); prev && !is_generated(prev))
        error(n.loc, "value %{} is already defined", n.text);
      for (const auto& m : out_names)
        if (m == n.text) error(n.loc, "value %{} is named twice", n.text);
      out_names.push_back(n.text);
    }
    try {
      Node* node = g_->append_call(op, std::move(call), op_loc, functional, out_names);
      for (Value* v : node->outputs()) user_named_[v] = !out_names.empty();
    } catch (const ParseError&) {
      throw;
    } catch (const Error& e) {
      error(op_loc, "{}", e.what());
    }
  }

  bool is_generated(Value* v) const {
    auto it = user_named_.find(v);
    return it != user_named_.end() && !it->second;
  }

  // --- types -----------------------------------------------------------------
  std::pair<ValueKind, TensorType> parse_type(bool scalars) {
    Token t = take(Tok::Ident, "a type (f32[4], i64, ...)");
    if (!at("[")) {
      if (scalars && t.text == "i64") return {ValueKind::Int, {}};
      if (scalars && t.text == "f64") return {ValueKind::Float, {}};
      if (scalars && t.text == "bool") return {ValueKind::Bool, {}};
      error(t.loc, "expected a tensor type like f32[4, 8]{}, found '{}'",
            scalars ? " or a scalar type (i64, f64, bool)" : "", t.text);
    }
    TensorType type;
    type.dtype = dtype_of(t);
    expect("[");
    if (!at("]")) {
      do type.sizes.push_back(int_literal(take(Tok::Int, "a dimension size")));
      while (accept(","));
    }
    expect("]");
    try {
      nbytes_of(type.sizes, element_size(type.dtype));  // the cap on every tensor (core/shape.h)
      type.strides = contiguous_strides(type.sizes);
    } catch (const Error& e) {
      error(t.loc, "type {}{}: {}", t.text, shape_to_string(type.sizes), e.what());
    }
    return {ValueKind::Tensor, type};
  }

  DType dtype_of(const Token& t) {
    static const std::pair<const char*, DType> kNames[] = {
        {"f32", DType::f32}, {"f64", DType::f64}, {"bf16", DType::bf16}, {"f16", DType::f16},
        {"i32", DType::i32}, {"i64", DType::i64}, {"bool", DType::boolean}};
    for (const auto& [n, d] : kNames)
      if (t.text == n) return d;
    error(t.loc, "expected a dtype (f32, f64, bf16, f16, i32, i64, bool), found '{}'", t.text);
  }
  static bool is_dtype(const std::string& s) {
    return s == "f32" || s == "f64" || s == "bf16" || s == "f16" || s == "i32" || s == "i64" || s == "bool";
  }

  // --- arguments -------------------------------------------------------------
  Arg parse_expr() {
    const Token& t = peek();
    if (t.kind == Tok::Value) return Arg(use_value(next()));
    if (at("[")) {
      Nested nested(this, next().loc);
      std::vector<Arg> elems;
      if (!at("]")) {
        do elems.push_back(parse_expr());
        while (accept(","));
      }
      expect("]");
      return Arg::list(std::move(elems));
    }
    if (t.kind == Tok::String) return Arg(IValue(next().text));
    if (t.kind == Tok::Float) return Arg(IValue(float_literal(next())));
    if (t.kind == Tok::Ident) {
      if (t.text == "true" || t.text == "false") return Arg(IValue(next().text == "true"));
      if (t.text == "None") return (next(), Arg(IValue()));
      if (t.text == "inf") return (next(), Arg(IValue(std::numeric_limits<double>::infinity())));
      if (t.text == "nan") return (next(), Arg(IValue(std::numeric_limits<double>::quiet_NaN())));
      if (is_dtype(t.text)) return Arg(IValue(dtype_of(next())));
    }
    if (at("-") && peek(1).kind == Tok::Float) {
      next();
      return Arg(IValue(-float_literal(next())));
    }
    if (at("-") && peek(1).kind == Tok::Ident && peek(1).text == "inf") {
      next(), next();
      return Arg(IValue(-std::numeric_limits<double>::infinity()));
    }
    if (t.kind == Tok::Int || at("(") || at("-") ||
        (t.kind == Tok::Ident && (t.text == "rank" || t.text == "world"))) {
      SourceLoc l = t.loc;
      IntExpr::Ptr e = int_expr(0);
      int64_t v = 0;
      try {
        v = e->eval(rank_, o_.world);
      } catch (const Error& err) {
        error(l, "{}", err.what());
      }
      return e->uses_rank_or_world() ? Arg::of_expr(e, v) : Arg(IValue(v));
    }
    error(t.loc, "expected an argument (a %value, number, string, list, dtype, true/false/None), found {}",
          describe(t));
  }

  // Precedence climbing: + - (1) below * / % (2); unary minus binds tightest.
  IntExpr::Ptr int_expr(int min_prec) {
    IntExpr::Ptr lhs = int_atom();
    // Each operator deepens the tree that eval() and printing walk by recursion.
    std::vector<Nested> chain;
    for (;;) {
      const Token& t = peek();
      if (t.kind != Tok::Punct) return lhs;
      int prec = (t.text == "+" || t.text == "-") ? 1 : (t.text == "*" || t.text == "/" || t.text == "%") ? 2 : 0;
      if (prec == 0 || prec < min_prec) return lhs;
      chain.emplace_back(this, t.loc);
      std::string op = next().text;
      IntExpr::Ptr rhs = int_expr(prec + 1);
      IntExpr::Op o = op == "+" ? IntExpr::Op::Add : op == "-" ? IntExpr::Op::Sub
                    : op == "*" ? IntExpr::Op::Mul : op == "/" ? IntExpr::Op::Div : IntExpr::Op::Mod;
      lhs = IntExpr::binary(o, lhs, rhs);
    }
  }
  IntExpr::Ptr int_atom() {
    const Token& t = peek();
    Nested nested(this, t.loc);  // `(`, unary `-`: each level is a recursion
    if (accept("-")) {
      if (peek().kind == Tok::Int) return IntExpr::constant(-int_literal(next()));
      return IntExpr::unary(IntExpr::Op::Neg, int_atom());
    }
    if (accept("(")) {
      IntExpr::Ptr e = int_expr(0);
      expect(")");
      return e;
    }
    if (t.kind == Tok::Int) return IntExpr::constant(int_literal(next()));
    if (t.kind == Tok::Ident && t.text == "rank") return (next(), IntExpr::rank());
    if (t.kind == Tok::Ident && t.text == "world") return (next(), IntExpr::world());
    if (t.kind == Tok::Float) error(t.loc, "expected an integer, found the number {}", t.text);
    error(t.loc, "expected an integer, 'rank', 'world' or '(', found {}", describe(t));
  }

  // Brackets, parentheses and operators open at once, counted while they are
  // parsed (by recursion): past kMaxNestingDepth it is an error, not a stack overflow.
  struct Nested {
    Parser* p;
    Nested(Parser* parser, SourceLoc l) : p(parser) {
      if (++p->depth_ > kMaxNestingDepth)
        p->error(l, "nesting deeper than {} levels (brackets, parentheses or operators in one expression)",
                 kMaxNestingDepth);
    }
    Nested(Nested&& o) noexcept : p(std::exchange(o.p, nullptr)) {}
    Nested(const Nested&) = delete;
    ~Nested() {
      if (p) --p->depth_;
    }
  };

  int64_t int_literal(const Token& t) {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (ec != std::errc() || end != t.text.data() + t.text.size())
      error(t.loc, "integer {} does not fit in 64 bits (the largest is {})", t.text,
            std::numeric_limits<int64_t>::max());
    return v;
  }
  // Python's float(): past the double range is inf, below it 0 (never an exception).
  static double float_literal(const Token& t) { return std::strtod(t.text.c_str(), nullptr); }

  Value* use_value(const Token& t) {
    Value* v = g_->find_value(t.text);
    if (!v || is_generated(v)) error(t.loc, "use of undefined value %{}", t.text);
    return v;
  }

  // --- tokens ----------------------------------------------------------------
  const Token& peek(size_t k = 0) const { return t_[std::min(p_ + k, t_.size() - 1)]; }
  Token next() { return t_[p_ < t_.size() - 1 ? p_++ : p_]; }
  bool at(std::string_view punct) const { return peek().kind == Tok::Punct && peek().text == punct; }
  bool accept(std::string_view punct) {
    if (!at(punct)) return false;
    next();
    return true;
  }
  void expect(std::string_view punct) {
    if (!accept(punct)) error(peek().loc, "expected '{}', found {}", punct, describe(peek()));
  }
  void expect_ident(std::string_view word) {
    if (peek().kind != Tok::Ident || peek().text != word)
      error(peek().loc, "expected '{}', found {}", word, describe(peek()));
    next();
  }
  Token take(Tok k, std::string_view what) {
    if (peek().kind != k) error(peek().loc, "expected {}, found {}", what, describe(peek()));
    return next();
  }
  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Tok::End: return "end of file";
      case Tok::Value: return "%" + t.text;
      case Tok::String: return fmt::format("the string \"{}\"", t.text);
      case Tok::Punct: return fmt::format("'{}'", t.text);
      default: return fmt::format("'{}'", t.text);
    }
  }
  template <typename... A>
  [[noreturn]] void error(SourceLoc l, fmt::format_string<A...> f, A&&... a) {
    throw ParseError(printable(fmt::format("{}:{}:{}: {}", o_.file, l.line, l.col, fmt::format(f, std::forward<A>(a)...))));
  }

  std::vector<Token> t_;
  size_t p_ = 0;
  const ParseOptions& o_;
  int rank_ = 0;  // the rank the graph being parsed is for
  int depth_ = 0;  // Nested levels open now
  std::unique_ptr<Graph> g_;
  std::unordered_map<const Value*, bool> user_named_;  // node results: named in the text?
};

}  // namespace

std::unique_ptr<Graph> parse_graph(std::string_view text, const ParseOptions& opts) {
  SF_CHECK(opts.world >= 1 && opts.rank >= 0 && opts.rank < opts.world,
           "parse_graph: rank {} is not in a world of {}", opts.rank, opts.world);
  Lexer lex(text, opts.file);
  return Parser(lex.run(), opts).run();
}

std::vector<std::unique_ptr<Graph>> parse_program(std::string_view text, const ParseOptions& opts) {
  SF_CHECK(opts.world >= 1, "parse_program: a world of {} ranks", opts.world);
  Lexer lex(text, opts.file);
  return Parser(lex.run(), opts).run_all();
}

std::string print_program(const std::vector<std::unique_ptr<Graph>>& graphs) {
  std::string out;
  for (const auto& g : graphs) out += (out.empty() ? "" : "\n") + print_graph(*g);
  return out;
}

std::unique_ptr<Graph> parse_graph_file(const std::string& path, int rank, int world) {
  std::ifstream f(path);
  if (!f) throw ParseError(fmt::format("{}: cannot read the file", path));
  std::stringstream ss;
  ss << f.rdbuf();
  return parse_graph(ss.str(), ParseOptions{path, rank, world});
}

}  // namespace symmflow::ir
