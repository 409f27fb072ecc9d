#include "symmflow/frontend/compile.h"

#include <gtest/gtest.h>

#include <cstring>

#include "symmflow/exec/compiled_program.h"
#include "symmflow/frontend/dist_api.h"
#include "symmflow/frontend/tensor_api.h"
#include "symmflow/frontend/tracer.h"
#include "symmflow/ir/printer.h"
#include "symmflow/kernels/copy.h"
#include "symmflow/runtime/launcher.h"
#include "symmflow/runtime/world.h"

namespace symmflow {
namespace {

bool bitwise_equal(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.sizes() != b.sizes()) return false;
  Tensor ca = kernels::clone(a), cb = kernels::clone(b);
  return std::memcmp(ca.data_ptr(), cb.data_ptr(), ca.nbytes()) == 0;
}

Tensor mlp(Tensor x, Tensor w) {
  Tensor h = matmul(x, w);
  h += 1.0;                   // in place on an intermediate
  Tensor s = slice(h, 0, 0, 2);
  s *= 0.5;                   // in place through a view
  return relu(h) - 0.25;
}

TEST(Trace, RecordsTheOpsAsWritten) {
  frontend::Tracer tr("f", 0, 1);
  Tensor x = tr.input(Tensor::empty({4}));
  Tensor y = x * 2 + 1;
  y += x;
  Tensor v = slice(y, 0, 1, 3);
  tr.set_outputs({v, y > 0.5});
  auto g = tr.finish();
  EXPECT_EQ(ir::print_graph(*g),
            "graph @f(%in0: f32[4]) -> (f32[2], bool[4]) {\n"
            "  %_0 = aten::mul.Scalar(%in0, 2)\n"
            "  %_1 = aten::add.Scalar(%_0, 1)\n"
            "  aten::add_.Tensor(%_1, %in0)\n"
            "  %_3 = aten::slice.Tensor(%_1, 0, 1, 3, 1)\n"
            "  %_4 = aten::gt.Scalar(%_1, 0.5)\n"
            "  return %_3, %_4\n"
            "}\n");
  EXPECT_EQ(frontend::Tracer::active(), nullptr);
}

TEST(Compile, EagerAndCompiledAreBitwiseEqual) {
  Tensor x = randn({6, 5}, 1), w = randn({5, 4}, 2);
  Tensor eager = mlp(x, w);
  auto fast = compile(mlp, "mlp");
  Tensor a = fast(x, w), b = fast(x, w);
  EXPECT_TRUE(bitwise_equal(eager, a));
  EXPECT_TRUE(bitwise_equal(eager, b));
  EXPECT_EQ(fast.programs(), 1u);
  // Outputs are the caller's: a later call does not overwrite them.
  EXPECT_NE(a.data_ptr(), b.data_ptr());
  // Another signature, another program.
  Tensor x2 = randn({3, 5}, 3);
  EXPECT_TRUE(bitwise_equal(mlp(x2, w), fast(x2, w)));
  EXPECT_EQ(fast.programs(), 2u);
}

TEST(Compile, WritesToInputsHappenAsEagerly) {
  auto f = [](Tensor x, Tensor y) {
    Tensor row = select(x, 0, 1);
    row += y;                 // through a view of an input
    x *= 2.0;                 // the input itself
    return sum(x, {1});
  };
  Tensor x1 = randn({3, 4}, 4), y = randn({4}, 5);
  Tensor x2 = kernels::clone(x1);
  Tensor eager = f(x1, y);
  auto fast = compile(f);
  Tensor out = fast(x2, y);
  EXPECT_TRUE(bitwise_equal(eager, out));
  EXPECT_TRUE(bitwise_equal(x1, x2)) << "the input's final contents differ";
}

TEST(Compile, StridedInputsKeepTheirLayout) {
  // A transposed input written through a slice: every version keeps the input's
  // layout, so the write-back lands where eager writes.
  auto f = [](Tensor xt) {
    Tensor s = slice(xt, 1, 1, 3);
    s += 10.0;
    xt -= 1.0;
    return clone(xt);
  };
  Tensor base1 = randn({4, 6}, 6), base2 = kernels::clone(base1);
  Tensor t1 = transpose(base1, 0, 1), t2 = transpose(base2, 0, 1);
  Tensor eager = f(t1);
  auto fast = compile(f);
  Tensor out = fast(t2);
  EXPECT_TRUE(bitwise_equal(eager, out));
  EXPECT_TRUE(bitwise_equal(base1, base2));
}

TEST(Compile, GuardsAndCapturedTensorsAreClearErrors) {
  Tensor outside = randn({4}, 7);
  auto f = [&](Tensor x) { return x + outside; };
  auto fast = compile(f);
  try {
    fast(randn({4}, 8));
    FAIL() << "a captured tensor must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not an input of the traced function"), std::string::npos) << e.what();
  }
  EXPECT_EQ(frontend::Tracer::active(), nullptr) << "a failed trace leaves the thread eager";
  auto g = [](Tensor x) { return x * 3; };
  auto fg = compile(g);
  fg(randn({4}, 9));
  const exec::CompiledProgram* p = fg.cache().program_for({randn({4}, 9)});
  ASSERT_NE(p, nullptr);
  try {
    std::vector<IValue> wrong{IValue(randn({5}, 1))};
    const_cast<exec::CompiledProgram*>(p)->run(wrong);
    FAIL() << "guards must refuse another shape";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("was compiled for f32[4]"), std::string::npos) << e.what();
  }
}

// The ring step of DESIGN.md §6 at 2, 3 and 4 ranks: P2P traced, waits recorded.
Tensor ring_step(Tensor x0, Tensor y0) {
  auto& g = dist::world();
  int nxt = (g.rank() + 1) % g.size(), prv = (g.rank() + g.size() - 1) % g.size();
  auto works = dist::batch_isend_irecv({dist::P2POp::send(x0, nxt), dist::P2POp::recv(y0, prv)});
  auto t0 = x0 * 2 + 1;
  for (auto& w : works) w.wait();
  Tensor r = y0 + t0;
  dist::all_reduce_(r);
  return r;
}

TEST(Compile, RingStepAcrossRanks) {
  for (int n : {2, 3, 4}) {
    int rc = runtime::launch_fn(n, [] {
      dist::init();
      Tensor x = randn({1000}, dist::world().rank());
      Tensor y1 = zeros({1000}), y2 = zeros({1000});
      Tensor eager = ring_step(x, y1);
      auto step = compile(ring_step);
      Tensor out = step(x, y2);
      SF_CHECK(bitwise_equal(eager, out) && bitwise_equal(y1, y2), "rank {}: compiled differs", dist::world().rank());
      return 0;
    });
    EXPECT_EQ(rc, 0) << n << " ranks";
  }
}

// A traced function racy in eager (it reads its receive buffer before the
// wait) is refused when it is compiled, naming both ops (passes/race_check.h).
Tensor racy_self_exchange(Tensor x, Tensor y) {
  const int me = dist::world().rank();
  auto works = dist::batch_isend_irecv({dist::P2POp::send(x, me), dist::P2POp::recv(y, me)});
  Tensor t = y * 2.0;  // before the wait
  for (auto& w : works) w.wait();
  return t;
}

TEST(Compile, ARacyFunctionIsAnError) {
  int rc = runtime::launch_fn(1, [] {
    dist::init();
    auto f = compile(racy_self_exchange);
    std::string msg;
    try {
      f(zeros({8}), zeros({8}));
    } catch (const Error& e) {
      msg = e.what();
    }
    SF_CHECK(msg.find("error: race: aten::mul reads") != std::string::npos &&
                 msg.find("while c10d::batch_isend_irecv at <traced>") != std::string::npos,
             "expected the race named, got '{}'", msg);
    return 0;
  });
  EXPECT_EQ(rc, 0);
}

// Ranks that trace different communication: rank 0 sends, rank 1 posts no
// receive. sf::compile refuses it on both ranks before anything runs
// (exec/comm_match.h), naming the send and the rank that lacks the receive.
Tensor half_exchange(Tensor x) {
  std::vector<dist::P2POp> ops;
  if (dist::world().rank() == 0) ops.push_back(dist::P2POp::send(x, 1));
  if (!ops.empty())
    for (auto& w : dist::batch_isend_irecv(ops)) w.wait();
  return x * 2.0;
}

TEST(Compile, AnUnmatchedSendFailsEveryRankBeforeTheFirstRun) {
  int rc = runtime::launch_fn(2, [] {
    dist::init();
    auto f = compile(half_exchange);
    std::string msg;
    try {
      f(zeros({8}));
    } catch (const Error& e) {
      msg = e.what();
    }
    SF_CHECK(msg.find("communication does not match across ranks: rank 0's send #1 (send to rank 1 (tag 0, f32, 32 "
                      "bytes) at <traced>: op 1 of @") != std::string::npos &&
                 msg.find("has no matching receive on rank 1") != std::string::npos,
             "rank {}: expected the unmatched send named, got '{}'", dist::world().rank(), msg);
    return 0;
  });
  EXPECT_EQ(rc, 0);
}

}  // namespace
}  // namespace symmflow
