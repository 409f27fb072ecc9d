// A 1F1B pipeline (one forward, one backward) over the ranks, the C++ twin of
// pipeline_1f1b.sf. Stage r holds the weights w of layer r. Forward, on each
// micro-batch: a = relu(h @ w), stage 0 reading h from x, the others receiving
// it from stage r-1, every stage but the last sending a on. The last stage's
// loss is 0.5 * sum((a - t)^2) against the target t, so its gradient is a - t.
// Backward: g = grad_a * (y > 0), grad_w += h^T @ g, and grad_h = g @ w^T sent
// back to stage r-1. Each stage returns its grad_w, summed over the
// micro-batches in order.
//
// The 1F1B order: stage r runs stages - 1 - r warm-up forwards, then one
// forward and one backward in turn, then the remaining backwards; each stage
// keeps the next receive of each direction posted ahead and waits for its sends
// at the end. The ranks branch on their rank, so each traces a different
// program (docs/ir.md, "Programs whose ranks run different code").
//
// --check also compares each stage's grad_w with the unsharded model's (every
// layer on one rank, the whole batch at once, computed here on every rank):
// equal to f32 rounding (the micro-batches sum grad_w in another order).
//
//   symmflow launch --nproc 4 -- build/dev/examples/pipeline_1f1b --check
//   symmflow launch --nproc 2 -- build/dev/examples/pipeline_1f1b --iters 50 --size 256 --steps 8
#include <cmath>
#include <utility>

#include "example_harness.h"

namespace sf = symmflow;

constexpr const char* kUsage = R"(usage: pipeline_1f1b [--check] [--iters N] [--size N] [--steps M]
  A 1F1B pipeline: one stage per rank, M micro-batches of 4 rows of f32[N], forward and backward.
  --check     run eagerly and through sf::compile, compare every output bitwise on every rank,
              and each stage's weight gradient with the unsharded model's
  --iters N   print the median seconds per call of each mode over N calls (rank 0)
  --size N    features per row, the stages' weights are f32[N, N] (default 64)
  --steps M   micro-batches (default 4)
)";

constexpr int64_t kRows = 4;  // rows per micro-batch
int micro_batches = 4;

// The 1F1B order of stage `rank` of `stages`: ('F', m) forward and ('B', m)
// backward steps of micro-batch m.
std::vector<std::pair<char, int>> order_1f1b(int stages, int rank, int m_all) {
  const int warm = std::min(stages - 1 - rank, m_all);
  std::vector<std::pair<char, int>> steps;
  for (int m = 0; m < warm; ++m) steps.emplace_back('F', m);
  for (int i = 0; i < m_all - warm; ++i) {
    steps.emplace_back('F', warm + i);
    steps.emplace_back('B', i);
  }
  for (int m = m_all - warm; m < m_all; ++m) steps.emplace_back('B', m);
  return steps;
}

sf::Tensor rows_of(const sf::Tensor& t, int m) { return sf::slice(t, 0, m * kRows, (m + 1) * kRows); }

// x: f32[M * 4, N] (stage 0's input), w: this stage's f32[N, N], t: f32[M * 4, N]
// (the last stage's target). Returns this stage's weight gradient f32[N, N].
sf::Tensor pipeline_1f1b(sf::Tensor x, sf::Tensor w, sf::Tensor t) {
  auto& g = sf::dist::world();
  const int rank = g.rank(), m_all = micro_batches;
  const bool first = rank == 0, last = rank == g.size() - 1;
  const int64_t n = w.size(0);
  const auto count = static_cast<size_t>(m_all);
  std::vector<sf::Tensor> h(count), y(count), a(count), fwd_buf(count), bwd_buf(count);
  std::vector<sf::dist::Work> fwd_recv(count), bwd_recv(count), sends;
  auto post_forward = [&](int m) {  // micro-batch m's activations, from the stage before
    if (first || m >= m_all) return;
    fwd_buf[size_t(m)] = sf::zeros({kRows, n});
    fwd_recv[size_t(m)] = sf::dist::irecv(fwd_buf[size_t(m)], rank - 1, /*tag=*/m);
  };
  auto post_backward = [&](int m) {  // micro-batch m's gradient, from the stage after
    if (last || m >= m_all) return;
    bwd_buf[size_t(m)] = sf::zeros({kRows, n});
    bwd_recv[size_t(m)] = sf::dist::irecv(bwd_buf[size_t(m)], rank + 1, /*tag=*/m);
  };
  post_forward(0);
  post_backward(0);
  sf::Tensor grad_w;
  const sf::Tensor wt = sf::transpose(w, 0, 1);
  for (auto [kind, m] : order_1f1b(g.size(), rank, m_all)) {
    const size_t i = size_t(m);
    if (kind == 'F') {
      if (first) {
        h[i] = rows_of(x, m);
      } else {
        fwd_recv[i].wait();
        h[i] = fwd_buf[i];
        post_forward(m + 1);
      }
      y[i] = sf::mm(h[i], w);
      a[i] = sf::relu(y[i]);
      if (!last) sends.push_back(sf::dist::isend(a[i], rank + 1, /*tag=*/m));
      continue;
    }
    sf::Tensor grad_a;
    if (last) {
      grad_a = a[i] - rows_of(t, m);
    } else {
      bwd_recv[i].wait();
      grad_a = bwd_buf[i];
      post_backward(m + 1);
    }
    auto grad_y = grad_a * (y[i] > 0);
    auto gw = sf::mm(sf::transpose(h[i], 0, 1), grad_y);
    grad_w = m == 0 ? gw : grad_w + gw;
    if (!first) sends.push_back(sf::dist::isend(sf::mm(grad_y, wt), rank - 1, /*tag=*/m));
  }
  for (auto& s : sends) s.wait();
  return grad_w;
}

// The same model unsharded: every layer's weights (stage s's, as main makes
// them), the whole batch at once. Returns layer `layer`'s weight gradient.
sf::Tensor unsharded_grad_w(const sf::Tensor& x, const std::vector<sf::Tensor>& ws, const sf::Tensor& t, int layer) {
  std::vector<sf::Tensor> hs{x}, ys;
  for (const auto& w : ws) {
    ys.push_back(sf::mm(hs.back(), w));
    hs.push_back(sf::relu(ys.back()));
  }
  sf::Tensor grad_a = hs.back() - t;
  for (int s = int(ws.size()) - 1; s >= 0; --s) {
    auto grad_y = grad_a * (ys[size_t(s)] > 0);
    if (s == layer) return sf::mm(sf::transpose(hs[size_t(s)], 0, 1), grad_y);
    grad_a = sf::mm(grad_y, sf::transpose(ws[size_t(s)], 0, 1));
  }
  return {};
}

// max |got - want| / (1 + max |want|), over contiguous f32 tensors.
double relative_error(const sf::Tensor& got, const sf::Tensor& want) {
  auto a = sf::contiguous(got), b = sf::contiguous(want);
  const float *pa = a.data<float>(), *pb = b.data<float>();
  double worst = 0, largest = 0;
  for (int64_t k = 0; k < a.numel(); ++k) {
    worst = std::max(worst, std::abs(double(pa[k]) - double(pb[k])));
    largest = std::max(largest, std::abs(double(pb[k])));
  }
  return worst / (1 + largest);
}

int main(int argc, char** argv) {
  const auto opt = sfex::start(argc, argv, kUsage, {.size = 64, .steps = 4});
  micro_batches = opt.steps;
  const int rank = sf::dist::world().rank(), stages = sf::dist::world().size();
  const int64_t batch = micro_batches * kRows;
  auto weights = [&](int stage) { return sf::randn({opt.size, opt.size}, /*seed=*/stage) * 0.25; };
  auto make_inputs = [&] {
    return sfex::Inputs{sf::randn({batch, opt.size}, /*seed=*/100), weights(rank),
                        sf::randn({batch, opt.size}, /*seed=*/200)};
  };
  auto fast = sf::compile(pipeline_1f1b, "pipeline_1f1b");
  int status = sfex::run(
      opt, make_inputs, [](const sfex::Inputs& in) { return std::vector{pipeline_1f1b(in[0], in[1], in[2])}; },
      [&](const sfex::Inputs& in) { return std::vector{fast(in[0], in[1], in[2])}; });
  if (opt.check || opt.iters == 0) {
    const auto in = make_inputs();
    std::vector<sf::Tensor> ws;
    for (int s = 0; s < stages; ++s) ws.push_back(weights(s));
    const double err = relative_error(fast(in[0], in[1], in[2]), unsharded_grad_w(in[0], ws, in[2], rank));
    constexpr double kTolerance = 1e-5;
    const bool ok = sfex::all_ranks(err <= kTolerance);
    if (err > kTolerance) fmt::print("rank {}: grad_w differs from the unsharded model's: relative {:.3g}\n", rank, err);
    if (sfex::is_root())
      fmt::print("reference: {} ({} stages, {} micro-batches: each stage's grad_w against the unsharded model's, "
                 "relative tolerance {:g})\n",
                 ok ? "OK" : "MISMATCH", stages, micro_batches, kTolerance);
    if (!ok) status = 1;
  }
  return status;
}
