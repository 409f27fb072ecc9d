#include "symmflow/ir/int_expr.h"

#include <fmt/format.h>

#include "symmflow/core/checked.h"
#include "symmflow/core/error.h"

namespace symmflow::ir {

namespace {
constexpr std::string_view kWhat = "a rank/world expression";
}

int64_t floor_div(int64_t a, int64_t b) {
  SF_CHECK(b != 0, "division by zero in a rank/world expression");
  if (b == -1) return checked_sub(0, a, kWhat);  // INT64_MIN / -1 overflows
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t floor_mod(int64_t a, int64_t b) {
  SF_CHECK(b != 0, "modulo by zero in a rank/world expression");
  if (b == -1) return 0;  // INT64_MIN % -1 traps
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;  // opposite signs: cannot overflow
  return r;
}

IntExpr::Ptr IntExpr::constant(int64_t v) { return Ptr(new IntExpr(Op::Const, v, nullptr, nullptr)); }
IntExpr::Ptr IntExpr::rank() { return Ptr(new IntExpr(Op::Rank, 0, nullptr, nullptr)); }
IntExpr::Ptr IntExpr::world() { return Ptr(new IntExpr(Op::World, 0, nullptr, nullptr)); }
IntExpr::Ptr IntExpr::unary(Op op, Ptr a) { return Ptr(new IntExpr(op, 0, std::move(a), nullptr)); }
IntExpr::Ptr IntExpr::binary(Op op, Ptr a, Ptr b) {
  return Ptr(new IntExpr(op, 0, std::move(a), std::move(b)));
}

int64_t IntExpr::eval(int64_t rank, int64_t world) const {
  switch (op_) {
    case Op::Const: return value_;
    case Op::Rank: return rank;
    case Op::World: return world;
    case Op::Neg: return checked_sub(0, a_->eval(rank, world), kWhat);
    case Op::Add: return checked_add(a_->eval(rank, world), b_->eval(rank, world), kWhat);
    case Op::Sub: return checked_sub(a_->eval(rank, world), b_->eval(rank, world), kWhat);
    case Op::Mul: return checked_mul(a_->eval(rank, world), b_->eval(rank, world), kWhat);
    case Op::Div: return floor_div(a_->eval(rank, world), b_->eval(rank, world));
    case Op::Mod: return floor_mod(a_->eval(rank, world), b_->eval(rank, world));
  }
  return 0;
}

bool IntExpr::uses_rank_or_world() const {
  if (op_ == Op::Rank || op_ == Op::World) return true;
  return (a_ && a_->uses_rank_or_world()) || (b_ && b_->uses_rank_or_world());
}

bool IntExpr::uses_rank() const {
  return op_ == Op::Rank || (a_ && a_->uses_rank()) || (b_ && b_->uses_rank());
}

namespace {
int precedence(IntExpr::Op op) {
  switch (op) {
    case IntExpr::Op::Add:
    case IntExpr::Op::Sub: return 1;
    case IntExpr::Op::Mul:
    case IntExpr::Op::Div:
    case IntExpr::Op::Mod: return 2;
    case IntExpr::Op::Neg: return 3;
    default: return 4;
  }
}
char symbol(IntExpr::Op op) {
  switch (op) {
    case IntExpr::Op::Add: return '+';
    case IntExpr::Op::Sub: return '-';
    case IntExpr::Op::Mul: return '*';
    case IntExpr::Op::Div: return '/';
    default: return '%';
  }
}
}  // namespace

std::string IntExpr::to_string() const { return to_string(0); }

// Left-associative: the right operand of `-`, `/`, `%` needs parentheses at equal
// precedence ("a-(b-c)"), the left one never does.
std::string IntExpr::to_string(int parent_prec) const {
  std::string s;
  int prec = precedence(op_);
  switch (op_) {
    case Op::Const: return value_ < 0 ? fmt::format("({})", value_) : std::to_string(value_);
    case Op::Rank: return "rank";
    case Op::World: return "world";
    case Op::Neg: s = "-" + a_->to_string(prec); break;
    default: s = a_->to_string(prec) + symbol(op_) + b_->to_string(prec + 1); break;
  }
  return prec < parent_prec ? "(" + s + ")" : s;
}

}  // namespace symmflow::ir
