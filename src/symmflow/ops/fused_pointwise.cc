#include "symmflow/ops/fused_pointwise.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <any>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "symmflow/core/storage.h"
#include "symmflow/kernels/factories.h"
#include "symmflow/kernels/pointwise.h"
#include "symmflow/library/dispatcher.h"
#include "symmflow/ops/boxing.h"
#include "symmflow/ops/fused_block.h"
#include "symmflow/ops/fused_steps.h"

namespace symmflow::ops {

using fused::Role;

bool is_fusible_pointwise(std::string_view full_name) {
  static const std::unordered_set<std::string_view> fusible = {
#define SF_FUSIBLE_UNARY(name, F, to_float, dtypes) "aten::" #name,
      SF_POINTWISE_UNARY_OPS(SF_FUSIBLE_UNARY)
#undef SF_FUSIBLE_UNARY
#define SF_FUSIBLE_COMPARE(name, F) "aten::" #name ".Tensor", "aten::" #name ".Scalar",
      SF_POINTWISE_COMPARE_OPS(SF_FUSIBLE_COMPARE)
#undef SF_FUSIBLE_COMPARE
      "aten::add.Tensor", "aten::add.Scalar", "aten::sub.Tensor", "aten::sub.Scalar", "aten::rsub.Tensor",
      "aten::rsub.Scalar", "aten::mul.Tensor", "aten::mul.Scalar", "aten::div.Tensor", "aten::div.Scalar",
      "aten::div.Tensor_mode", "aten::div.Scalar_mode", "aten::pow.Tensor_Tensor", "aten::pow.Tensor_Scalar",
      "aten::maximum", "aten::minimum", "aten::clamp", "aten::clamp.Tensor", "aten::clamp_min", "aten::clamp_max",
      "aten::where.self", "aten::where.ScalarSelf", "aten::where.ScalarOther", "aten::leaky_relu", "aten::elu",
      "aten::softplus", "aten::hardtanh", "aten::gelu"};
  return fusible.count(full_name) > 0;
}

// ---- the program text -------------------------------------------------------------

namespace {

std::string format_constant(const IValue& v) {
  switch (v.kind()) {
    case IValue::Kind::None: return "None";
    case IValue::Kind::Int: return std::to_string(v.to_int());
    case IValue::Kind::Bool: return v.to_bool() ? "true" : "false";
    case IValue::Kind::String: return "'" + v.to_string() + "'";
    case IValue::Kind::Double: {
      const double d = v.to_double();
      if (std::isnan(d)) return "nan";
      if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
      std::string s = fmt::format("{}", d);  // shortest text that reads back exactly
      if (s.find_first_of(".e") == std::string::npos) s += ".0";  // stays a float
      return s;
    }
    case IValue::Kind::List: return fmt::format("[{}]", fmt::join(v.to_int_list(), ", "));  // a reduction's dims
    default:
      fail("fused_pointwise: a step constant must be a number, bool, None, string or int list, found {}",
           v.kind_name());
  }
}

class ProgramReader {
 public:
  explicit ProgramReader(std::string_view text) : text_(text) {}

  std::vector<FusedStep> read() {
    std::vector<FusedStep> steps;
    skip_space();
    while (pos_ < text_.size()) {
      FusedStep s;
      s.op = std::string(token("an op name (aten::add.Tensor)", [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':' || c == '.';
      }));
      expect('(');
      skip_space();
      if (peek() != ')') {
        for (;;) {
          s.args.push_back(operand(steps.size()));
          skip_space();
          if (peek() == ')') break;
          expect(',');
        }
      }
      expect(')');
      steps.push_back(std::move(s));
      skip_space();
      if (pos_ < text_.size()) expect(';');
      skip_space();
    }
    if (steps.empty()) error("at least one step");
    return steps;
  }

 private:
  [[noreturn]] void error(std::string_view expected) const {
    fail("fused_pointwise: program column {}: expected {}, found '{}' (the program: {})", pos_ + 1, expected,
         pos_ < text_.size() ? text_.substr(pos_, 12) : std::string_view("end"), text_);
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  void expect(char c) {
    skip_space();
    if (peek() != c) error(fmt::format("'{}'", c));
    ++pos_;
  }
  template <class Pred>
  std::string_view token(std::string_view what, Pred ok) {
    skip_space();
    const size_t b = pos_;
    while (pos_ < text_.size() && ok(text_[pos_])) ++pos_;
    if (pos_ == b) error(what);
    return text_.substr(b, pos_ - b);
  }
  FusedOperand operand(size_t steps_so_far) {
    FusedOperand o;
    skip_space();
    if (peek() == '\'') {
      const size_t end = text_.find('\'', pos_ + 1);
      if (end == std::string_view::npos) error("a closing quote");
      o.constant = IValue(std::string(text_.substr(pos_ + 1, end - pos_ - 1)));
      pos_ = end + 1;
      return o;
    }
    if (peek() == '[') return int_list();
    const size_t at = pos_;
    const std::string_view w = token("an operand (x0, t1) or a constant", [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' || c == '+';
    });
    auto index = [&](std::string_view digits, size_t limit, std::string_view what) {
      int i = -1;
      auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), i);
      pos_ = at;
      if (ec != std::errc() || p != digits.data() + digits.size() || i < 0) error(what);
      if (size_t(i) >= limit) error(fmt::format("{} below {}", what, limit));
      pos_ = at + 1 + digits.size();
      return i;
    };
    if (w.size() > 1 && (w[0] == 'x' || w[0] == 't') && std::isdigit(static_cast<unsigned char>(w[1]))) {
      o.kind = w[0] == 'x' ? FusedOperand::Kind::input : FusedOperand::Kind::step;
      // Inputs are bounded by the op's inputs (checked when it runs); a step
      // reads only the steps before it.
      o.index = index(w.substr(1), w[0] == 'x' ? size_t(1) << 20 : steps_so_far,
                      w[0] == 'x' ? "an input index" : "an earlier step");
      return o;
    }
    if (w == "None") return o;
    if (w == "true" || w == "false") {
      o.constant = IValue(w == "true");
      return o;
    }
    if (w == "nan" || w == "inf" || w == "-inf") {
      o.constant = IValue(w == "nan" ? std::nan("") : w == "inf" ? HUGE_VAL : -HUGE_VAL);
      return o;
    }
    const std::string s(w);
    char* end = nullptr;
    if (s.find_first_of(".e") == std::string::npos) {
      const long long i = std::strtoll(s.c_str(), &end, 10);
      o.constant = IValue(int64_t(i));
    } else {
      o.constant = IValue(std::strtod(s.c_str(), &end));
    }
    if (end != s.c_str() + s.size()) {
      pos_ = at;
      error("an operand (x0, t1) or a constant (a number, true, false, None, 'text')");
    }
    return o;
  }

  // `[-1]`, `[0, 2]`, `[]`: a list of ints (a reduction's dims).
  FusedOperand int_list() {
    expect('[');
    std::vector<int64_t> ints;
    skip_space();
    while (peek() != ']') {
      if (!ints.empty()) expect(',');
      const std::string_view w = token("an int", [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '-'; });
      int64_t i = 0;
      auto [p, ec] = std::from_chars(w.data(), w.data() + w.size(), i);
      if (ec != std::errc() || p != w.data() + w.size()) {
        pos_ -= w.size();
        error("an int");
      }
      ints.push_back(i);
      skip_space();
    }
    expect(']');
    FusedOperand o;
    o.constant = IValue(ints);
    return o;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

std::string format_fused_program(const std::vector<FusedStep>& steps) {
  std::vector<std::string> out;
  for (const FusedStep& s : steps) {
    std::vector<std::string> args;
    for (const FusedOperand& a : s.args) {
      switch (a.kind) {
        case FusedOperand::Kind::input: args.push_back(fmt::format("x{}", a.index)); break;
        case FusedOperand::Kind::step: args.push_back(fmt::format("t{}", a.index)); break;
        case FusedOperand::Kind::constant: args.push_back(format_constant(a.constant)); break;
      }
    }
    out.push_back(fmt::format("{}({})", s.op, fmt::join(args, ", ")));
  }
  return fmt::format("{}", fmt::join(out, "; "));
}

std::vector<FusedStep> parse_fused_program(std::string_view text) { return ProgramReader(text).read(); }

// ---- running it ---------------------------------------------------------------------

namespace {

// How the tiles view each input (whole rows per tile when one is a row or a
// strided grid), or nullopt when some intermediate does not have the result's
// shape or some input takes no tile view: then the steps run on whole tensors.
struct TileLayout {
  std::vector<Role> roles;
  bool rows = false;
};
std::optional<TileLayout> tile_layout(std::span<const Tensor> inputs, std::span<const Tensor> step_types,
                                      const Shape& shape) {
  if (shape.empty() || numel_of(shape) == 0) return std::nullopt;
  for (const Tensor& t : step_types)
    if (t.sizes() != shape) return std::nullopt;
  TileLayout l;
  for (const Tensor& t : inputs) {
    const Shape& s = t.sizes();
    const auto lead = std::find_if(s.begin(), s.end(), [](int64_t d) { return d != 1; }) - s.begin();
    if (s == shape && t.is_contiguous()) {
      l.roles.push_back(Role::full);
    } else if (s == shape && shape.size() <= 2) {
      l.roles.push_back(Role::strided);
      l.rows = l.rows || shape.size() == 2;
    } else if (t.numel() == 1) {
      l.roles.push_back(Role::scalar);
    } else if (shape.size() >= 2 && lead == long(s.size()) - 1 && s.back() == shape.back() && t.strides().back() == 1) {
      l.roles.push_back(Role::row);
      l.rows = true;
    } else {
      return std::nullopt;
    }
  }
  return l;
}

// What a run derives from the steps and the inputs' types and layouts alone.
struct Plan {
  std::vector<const Operator*> ops;
  std::vector<Tensor> types;                  // the inputs', then each step's (the Meta kernels')
  std::optional<TileLayout> layout;           // nullopt: the steps run on whole tensors
  std::optional<fused::BlockProgram> blocks;  // nullopt: tiles of the steps' kernels
};

Plan make_plan(std::span<const Tensor> inputs, const std::vector<FusedStep>& steps) {
  Plan p;
  p.ops = fused::resolve("fused_pointwise", steps, inputs.size(), is_fusible_pointwise,
                         "an elementwise op that can be fused");
  p.types = fused::step_types(inputs, steps, p.ops);
  p.layout = tile_layout(inputs, std::span(p.types).subspan(inputs.size()), p.types.back().sizes());
  if (p.layout) p.blocks = fused::BlockProgram::compile(steps, p.types, p.layout->roles);
  return p;
}

Tensor run_plan(std::span<const Tensor> inputs, const std::vector<FusedStep>& steps, const Plan& plan,
                int64_t tile_bytes, bool blocks) {
  const Tensor& result_type = plan.types.back();
  if (std::any_of(inputs.begin(), inputs.end(), [](const Tensor& t) { return t.is_meta(); })) return result_type;

  const Shape& shape = result_type.sizes();
  // The result is the first allocation, as with every kernel: the compiled
  // program's allocator hands it the node's planned buffer (exec/arenas.h).
  Tensor out = kernels::empty_strided(shape, result_type.strides(), result_type.dtype());
  OpContext ctx(DispatchKey::CPU);
  // Tiles and blocks view the result row-major; a result in another layout (the
  // steps' Meta kernels gave it its inputs' order) gets the steps on whole tensors.
  if (!out.is_contiguous()) {
    fused::run_whole(steps, plan.ops, inputs, ctx, out);
    return out;
  }
  if (blocks && plan.blocks) {
    plan.blocks->run(inputs, out, tile_bytes);
    return out;
  }
  if (!plan.layout) {
    fused::run_whole(steps, plan.ops, inputs, ctx, out);
    return out;
  }

  // Whole rows per tile with a row operand (each kernel's runs are then eager's:
  // one per row), else any multiple of 64 elements.
  const int64_t n = result_type.numel();
  const int64_t cols = shape.back();
  const int64_t item = int64_t(element_size(result_type.dtype()));
  const int64_t want = std::min(std::max<int64_t>(64, tile_bytes / item / 64 * 64), (n + 63) / 64 * 64);
  const bool rows = plan.layout->rows;
  const int64_t tile = rows ? std::max<int64_t>(1, want / cols) * cols : want;
  fused::TileAllocator scratch(fused::tile_scratch_bytes(tile, steps.size()));
  AllocatorGuard guard(scratch);
  auto view = [&](const Tensor& t, Role role, int64_t begin, int64_t len) -> Tensor {
    if (role == Role::scalar) {
      if (t.dim() == 0) return t;
      return rows ? t.as_strided({1, 1}, {1, 1}, t.storage_offset()) : t.as_strided({1}, {1}, t.storage_offset());
    }
    if (role == Role::row) return t.as_strided({cols}, {1}, t.storage_offset());
    if (role == Role::strided) {
      const Shape& st = t.strides();
      return rows ? t.as_strided({len / cols, cols}, {st[0], st[1]}, t.storage_offset() + begin / cols * st[0])
                  : t.as_strided({len}, {st[0]}, t.storage_offset() + begin * st[0]);
    }
    return rows ? t.as_strided({len / cols, cols}, {cols, 1}, t.storage_offset() + begin)
                : t.as_strided({len}, {1}, t.storage_offset() + begin);
  };
  std::vector<Tensor> tiles;
  for (int64_t begin = 0; begin < n; begin += tile) {
    const int64_t len = std::min(tile, n - begin);
    scratch.reset();
    tiles.clear();
    for (size_t i = 0; i < inputs.size(); ++i) tiles.push_back(view(inputs[i], plan.layout->roles[i], begin, len));
    fused::run_tile(steps, plan.ops, tiles, inputs.size(), ctx, scratch, view(out, Role::full, begin, len));
  }
  return out;
}

}  // namespace

bool runs_tiled(std::span<const Tensor> inputs, const std::vector<FusedStep>& steps) {
  return make_plan(inputs, steps).layout.has_value();
}

bool runs_in_blocks(std::span<const Tensor> inputs, const std::vector<FusedStep>& steps) {
  return make_plan(inputs, steps).blocks.has_value();
}

Tensor run_fused_pointwise(std::span<const Tensor> inputs, const std::vector<FusedStep>& steps, int64_t tile_bytes,
                           bool blocks) {
  return run_plan(inputs, steps, make_plan(inputs, steps), tile_bytes, blocks);
}

namespace {

SYMMFLOW_LIBRARY(symmflow, m) {
  m.def("fused_pointwise(Tensor[] inputs, str program) -> Tensor");
  impl_both(m, "fused_pointwise", [](OpContext&, Args a) -> Results {
    const std::vector<Tensor> inputs = a[0].to_tensor_list();
    const fused::CachedProgram& program = fused::cached_program(a[1].to_string());
    return {run_plan(inputs, program.steps,
                     fused::memo_plan<Plan>(program, inputs, [&] { return make_plan(inputs, program.steps); }),
                     kFusedTileBytes, true)};
  });
}

}  // namespace

}  // namespace symmflow::ops
