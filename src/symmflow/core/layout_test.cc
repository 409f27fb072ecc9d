// The strides of a fresh elementwise result, as PyTorch 1.13 gives them. The table
// is torch's answers to python/tests/test_result_layout.py's cases (that file
// prints it; the Python test runs both sides), operands given by their geometry.
#include "symmflow/core/layout.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace symmflow {
namespace {

struct Geometry {
  Shape sizes, strides;
};

struct Case {
  std::string name;
  Shape shape;
  std::vector<Geometry> operands;  // {{}, {}}: a number, or a 0-d tensor
  Shape want;
};

Shape strides_of(const Case& c) {
  std::vector<ViewGeometry> ops;
  for (const Geometry& g : c.operands) ops.push_back({g.sizes, g.strides, 0, 4});
  return elementwise_strides(c.shape, ops);
}

TEST(ElementwiseStrides, MatchTorchOnEveryCaseOfItsTable) {
  // clamp and pow take their numbers outside the iterator (PyTorch's unary
  // build): only the tensor is an operand there.
  const std::vector<Case> cases = {
      {"exp of x.t()", {4, 3}, {{{4, 3}, {1, 4}}}, {1, 4}},
      {"exp of a 3-d permute", {4, 2, 3}, {{{4, 2, 3}, {1, 12, 4}}}, {1, 12, 4}},
      {"add x.t() + y: the first operand decides", {4, 3}, {{{4, 3}, {1, 4}}, {{4, 3}, {3, 1}}}, {1, 4}},
      {"add y + x.t()", {4, 3}, {{{4, 3}, {3, 1}}, {{4, 3}, {1, 4}}}, {3, 1}},
      {"add row + x.t()", {4, 3}, {{{3}, {1}}, {{4, 3}, {1, 4}}}, {1, 4}},
      {"add x.t() + column", {4, 3}, {{{4, 3}, {1, 4}}, {{4, 1}, {1, 1}}}, {1, 4}},
      {"exp of a size-1 dim transposed", {3, 1}, {{{3, 1}, {1, 3}}}, {1, 1}},
      {"exp keeps a dense size-1 dim's stride", {4, 1, 3}, {{{4, 1, 3}, {1, 99, 4}}}, {1, 99, 4}},
      {"add number sorts a size-1 dim", {4, 1, 3}, {{{4, 1, 3}, {1, 99, 4}}, {{}, {}}}, {1, 12, 4}},
      {"exp of contiguous, odd size-1 stride", {4, 1, 3}, {{{4, 1, 3}, {3, 99, 1}}}, {3, 3, 1}},
      {"add number, contiguous, odd size-1 stride", {4, 1, 3}, {{{4, 1, 3}, {3, 99, 1}}, {{}, {}}}, {3, 12, 1}},
      {"exp of a non-dense slice", {4, 3}, {{{4, 3}, {6, 2}}}, {3, 1}},
      {"exp of a non-dense slice transposed", {3, 4}, {{{3, 4}, {2, 6}}}, {1, 3}},
      {"exp of an expanded column", {3, 4}, {{{3, 4}, {1, 0}}}, {4, 1}},
      {"add expanded + x.t()", {4, 3}, {{{4, 3}, {0, 1}}, {{4, 3}, {1, 4}}}, {1, 4}},
      {"exp of an expanded row in 3-d", {3, 4, 5}, {{{3, 4, 5}, {0, 0, 1}}}, {20, 5, 1}},
      {"exp of an empty transposed", {3, 0}, {{{3, 0}, {1, 3}}}, {1, 1}},
      {"add empty permuted + number tensor", {3, 0, 2}, {{{3, 0, 2}, {1, 3, 3}}, {{1}, {1}}}, {1, 3, 0}},
      {"exp of a 0-d tensor", {}, {{{}, {}}}, {}},
      {"mul x.t() * number", {4, 3}, {{{4, 3}, {1, 4}}, {{}, {}}}, {1, 4}},
      {"add x.t() + 0-d tensor", {4, 3}, {{{4, 3}, {1, 4}}, {{}, {}}}, {1, 4}},
      {"add f32 x.t() + f64 y", {4, 3}, {{{4, 3}, {1, 4}}, {{4, 3}, {3, 1}}}, {1, 4}},
      {"add non-dense f32 + contiguous f64", {3, 4}, {{{3, 4}, {2, 6}}, {{3, 4}, {4, 1}}}, {1, 3}},
      {"exp of channels-last", {2, 3, 4, 5}, {{{2, 3, 4, 5}, {60, 1, 15, 3}}}, {60, 1, 15, 3}},
      {"add two channels-last, odd size-1 strides",
       {2, 3, 4, 1},
       {{{2, 3, 4, 1}, {12, 1, 3, 3}}, {{2, 3, 4, 1}, {12, 1, 3, 99}}},
       {12, 1, 3, 3}},
      {"add permuted 3-d + contiguous", {3, 2, 4}, {{{3, 2, 4}, {4, 12, 1}}, {{3, 2, 4}, {8, 4, 1}}}, {4, 12, 1}},
      {"add two alike permutes", {4, 3, 2}, {{{4, 3, 2}, {1, 4, 12}}, {{4, 3, 2}, {1, 4, 12}}}, {1, 4, 12}},
      {"gt x.t() > 0", {4, 3}, {{{4, 3}, {1, 4}}, {{}, {}}}, {1, 4}},
      {"eq y == x.t()", {4, 3}, {{{4, 3}, {3, 1}}, {{4, 3}, {1, 4}}}, {3, 1}},
      {"where(x.t() > 0, x.t(), y)", {4, 3}, {{{4, 3}, {1, 4}}, {{4, 3}, {1, 4}}, {{4, 3}, {3, 1}}}, {1, 4}},
      {"where(column, x.t(), row)", {4, 3}, {{{4, 1}, {1, 1}}, {{4, 3}, {1, 4}}, {{3}, {1}}}, {1, 4}},
      {"clamp of x.t()", {4, 3}, {{{4, 3}, {1, 4}}}, {1, 4}},
      {"pow of x.t()", {4, 3}, {{{4, 3}, {1, 4}}}, {1, 4}},
      {"relu of a 3-d permute", {4, 2, 3}, {{{4, 2, 3}, {1, 12, 4}}}, {1, 12, 4}},
  };
  for (const Case& c : cases) EXPECT_EQ(strides_of(c), c.want) << c.name;
}

TEST(ElementwiseStrides, ContiguousOperandsGiveContiguousStridesOfTheResultShape) {
  // Row-major even where the result is larger than every operand (broadcast).
  EXPECT_EQ(strides_of({"row + column", {3, 4}, {{{4}, {1}}, {{3, 1}, {1, 1}}}, {}}), (Shape{4, 1}));
  EXPECT_EQ(strides_of({"no operands", {2, 5}, {}, {}}), (Shape{5, 1}));
}

TEST(ElementwiseStrides, RejectsStridesThatOverflowInt64) {
  // An empty result (so its shape passed numel_of) whose other dims multiply past
  // int64 in the sorted order, the empty dim last.
  const int64_t big = int64_t(1) << 40;
  EXPECT_THROW(strides_of({"", {0, big, big}, {{{0, big, big}, {int64_t(1) << 62, 1, big}}, {{1}, {1}}}, {}}), Error);
}

}  // namespace
}  // namespace symmflow
