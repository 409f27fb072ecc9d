// ReadFootprints: later reads count only where they meet the bytes a write
// replaces; a buffer moved into another keeps its views' places; view ops read
// nothing; storages a collective touches are left to per-storage decisions.
#include "symmflow/passes/read_footprints.h"

#include <gtest/gtest.h>

#include "symmflow/ir/parser.h"

namespace symmflow::passes {
namespace {

using ir::Node;
using ir::Value;

struct Fixture {
  std::unique_ptr<ir::Graph> g;
  std::vector<Value*> roots;
  std::unique_ptr<ReadFootprints> f;
  explicit Fixture(std::string_view body, std::string_view sig = "%t: f32[2, 4]") {
    g = ir::parse_graph(fmt::format("graph @f({}) -> () {{\n{}  return\n}}\n", sig, body), {"t.sf", 0, 2});
    roots = ir::storage_roots(*g);
    f = std::make_unique<ReadFootprints>(*g, roots);
    // Every tensor argument read at its node's place (1-based, as reinplace counts).
    for (size_t p = 0; p < g->nodes().size(); ++p)
      for (const auto& a : g->nodes()[p]->args())
        a.for_each_value([&](Value* v) { if (v->is_tensor()) f->add(cls(v), p + 1, g->nodes()[p], v); });
  }
  Value* v(std::string_view name) const { return g->find_value(name); }
  int cls(const Value* x) const { return roots[size_t(x->id())]->id(); }
  bool read_after(std::string_view target, size_t pos, const Node* skip = nullptr) const {
    return f->read_after(cls(v(target)), pos, [&](const Node* n) { return n == skip; }, v(target));
  }
};

TEST(ReadFootprints, CountsOnlyLaterReadsOfTheReplacedBytes) {
  Fixture t(R"(  %x = aten::zeros([4, 4], f32)
  %lo = aten::slice(%x, 0, 0, 2)
  %hi = aten::slice(%x, 0, 2, 4)
  %mid = aten::slice(%x, 0, 1, 3)
  %a = aten::mul(%hi, 2.0)
  %b = aten::mul(%mid, 2.0)
)");
  EXPECT_FALSE(t.read_after("lo", 6));                        // nothing after the last read
  EXPECT_TRUE(t.read_after("lo", 4));                         // %mid's row 1 is %lo's
  EXPECT_FALSE(t.read_after("lo", 4, t.v("b")->producer()));  // %hi alone: other rows
  EXPECT_TRUE(t.read_after("hi", 4, t.v("b")->producer()));   // ... which %hi covers
}

TEST(ReadFootprints, InterleavedColumnsShareNoByte) {
  Fixture t(R"(  %x = aten::zeros([3, 8], f32)
  %left = aten::slice(%x, 1, 0, 4)
  %right = aten::slice(%x, 1, 4, 8)
  %even = aten::slice(%x, 1, 0, None, 2)
  %a = aten::mul(%right, 2.0)
)");
  EXPECT_FALSE(t.read_after("left", 4));  // spans meet, elements do not
  EXPECT_TRUE(t.read_after("even", 4));   // columns 4 and 6
  EXPECT_FALSE(t.f->share_bytes(t.v("left"), t.v("right")));
  EXPECT_TRUE(t.f->share_bytes(t.v("left"), t.v("even")));
}

TEST(ReadFootprints, ViewOpsReadNoElement) {
  Fixture t(R"(  %x = aten::zeros([4, 4], f32)
  %lo = aten::slice(%x, 0, 0, 2)
  %tr = aten::t(%x)
  %row = aten::select(%tr, 1, 3)
)");
  EXPECT_FALSE(t.read_after("lo", 1));
}

TEST(ReadFootprints, MovedBufferTakesItsViewsAlong) {
  // %r (fresh) moves into rows 2..3 of %x: its row 1 is then %x's row 3.
  Fixture t(R"(  %x = aten::zeros([4, 4], f32)
  %hi = aten::slice(%x, 0, 2, 4)
  %r = aten::mul(%t, 2.0)
  %r1 = aten::slice(%r, 0, 1, 2)
  %row2 = aten::slice(%x, 0, 2, 3)
  %row3 = aten::slice(%x, 0, 3, 4)
)");
  t.f->relocate(t.v("r"), t.v("hi"));
  EXPECT_FALSE(t.f->share_bytes(t.v("r1"), t.v("row2")));
  EXPECT_TRUE(t.f->share_bytes(t.v("r1"), t.v("row3")));
}

TEST(ReadFootprints, StorageACollectiveTouchesIsNotDecidedByBytes) {
  Fixture t(R"(  %x = aten::zeros([2, 4], f32)
  %h0 = aten::select(%x, 0, 0)
  %h0.1 = functional c10d::all_reduce_(%h0, "sum", "world")
  %x.1 = aten::as_strided_scatter(%x, %h0.1, [4], [1], 0)
  %y = aten::zeros([2, 4], f32)
  %y0 = aten::select(%y, 0, 0)
  %s, %r = c10d::batch_isend_irecv(["isend", "irecv"], [(rank+1)%world, (rank-1+world)%world], [0, 0], [%t, %y0], "world")
)", "%t: f32[4]");
  EXPECT_FALSE(t.f->decides(t.v("h0")));
  EXPECT_FALSE(t.f->decides(t.v("x.1")));
  EXPECT_TRUE(t.f->decides(t.v("y0")));  // P2P only: each rank plans it alone
}

}  // namespace
}  // namespace symmflow::passes
