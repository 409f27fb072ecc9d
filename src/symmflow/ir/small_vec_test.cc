// SmallVec: a vector that keeps its first N elements inline, and behaves as
// std::vector across the inline/heap boundary.
#include "symmflow/ir/small_vec.h"

#include <gtest/gtest.h>

#include <vector>

namespace symmflow::ir {
namespace {

TEST(SmallVec, StaysInlineUpToNAndGrowsToTheHeapPast) {
  SmallVec<int64_t, 2> v;
  v.push_back(1);
  v.push_back(2);
  EXPECT_EQ(v.capacity(), 2u);
  const int64_t* inline_data = v.data();
  EXPECT_TRUE(inline_data >= reinterpret_cast<const int64_t*>(&v) &&
              inline_data < reinterpret_cast<const int64_t*>(&v + 1))
      << "the first elements live inside the object";
  for (int64_t i = 3; i <= 100; ++i) v.push_back(i);
  ASSERT_EQ(v.size(), 100u);
  for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(v[i], int64_t(i) + 1);
  EXPECT_EQ(v.to_vector(), [] {
    std::vector<int64_t> w;
    for (int64_t i = 1; i <= 100; ++i) w.push_back(i);
    return w;
  }());
}

TEST(SmallVec, PushingItsOwnElementWhileGrowingCopiesTheValueFirst) {
  SmallVec<int64_t, 1> v{7};
  v.push_back(v[0]);  // grows: v[0] moves to the heap during the push
  v.push_back(v.back());
  EXPECT_EQ(v.to_vector(), (std::vector<int64_t>{7, 7, 7}));
}

TEST(SmallVec, InsertEraseResizeAndAssignMatchStdVector) {
  SmallVec<int, 3> v{1, 2, 3};
  std::vector<int> w{1, 2, 3};
  v.insert(v.begin() + 1, 9);
  w.insert(w.begin() + 1, 9);
  v.erase(v.begin());
  w.erase(w.begin());
  v.resize(6, 4);
  w.resize(6, 4);
  v.erase(v.begin() + 1, v.begin() + 3);
  w.erase(w.begin() + 1, w.begin() + 3);
  EXPECT_EQ(v.to_vector(), w);
  v.assign(2, 5);
  EXPECT_EQ(v.to_vector(), (std::vector<int>{5, 5}));
  v.resize(1);
  EXPECT_EQ(v.to_vector(), (std::vector<int>{5}));
  EXPECT_THROW(v.at(1), std::out_of_range);
}

TEST(SmallVec, CopiesAndMovesKeepTheElementsInlineOrOnTheHeap) {
  SmallVec<int, 2> small{1, 2}, big{1, 2, 3, 4};
  SmallVec<int, 2> a = small, b = big;
  EXPECT_TRUE(a == small);
  EXPECT_TRUE(b == big);
  SmallVec<int, 2> c = std::move(b);  // takes the heap block
  EXPECT_EQ(c.to_vector(), (std::vector<int>{1, 2, 3, 4}));
  EXPECT_TRUE(b.empty());
  b = c;  // a moved-from vector is usable again
  EXPECT_TRUE(b == c);
  a = std::move(c);
  EXPECT_EQ(a.size(), 4u);
  SmallVec<int, 2> from_vector(std::vector<int>{5, 6, 7});
  EXPECT_EQ(from_vector.to_vector(), (std::vector<int>{5, 6, 7}));
  EXPECT_FALSE(from_vector == small);
}

}  // namespace
}  // namespace symmflow::ir
