// IntExpr: an integer expression over `rank` and `world`, as the text IR writes
// peers and sizes (`(rank+1)%world`, `(rank-2+2*world)%world`). The graph keeps
// the expression (so printing reproduces it) and its value for the rank it was
// built for. `/` and `%` round as Python's `//` and `%` do, so `(rank-1)%world`
// is a valid peer on rank 0.
//
//   auto e = IntExpr::parse("(rank+1)%world");   // or built by the text parser
//   int64_t peer = e->eval(/*rank=*/3, /*world=*/4);   // 0
#pragma once
#include <cstdint>
#include <memory>
#include <string>

namespace symmflow::ir {

class IntExpr {
 public:
  enum class Op { Const, Rank, World, Neg, Add, Sub, Mul, Div, Mod };
  using Ptr = std::shared_ptr<const IntExpr>;

  static Ptr constant(int64_t v);
  static Ptr rank();
  static Ptr world();
  static Ptr unary(Op op, Ptr a);
  static Ptr binary(Op op, Ptr a, Ptr b);

  Op op() const { return op_; }
  // Throws an Error on division by zero.
  int64_t eval(int64_t rank, int64_t world) const;
  // Canonical text with the parentheses precedence needs: "(rank+1)%world".
  std::string to_string() const;
  bool uses_rank_or_world() const;
  bool uses_rank() const;

 private:
  IntExpr(Op op, int64_t v, Ptr a, Ptr b) : op_(op), value_(v), a_(std::move(a)), b_(std::move(b)) {}
  std::string to_string(int parent_prec) const;
  Op op_;
  int64_t value_ = 0;
  Ptr a_, b_;
};

// Python's floor division and modulo (the divisor's sign), shared with the parser's tests.
int64_t floor_div(int64_t a, int64_t b);
int64_t floor_mod(int64_t a, int64_t b);

}  // namespace symmflow::ir
