// Ring attention, the C++ twin of ring_attention.sf: the sequence is split
// across the ranks (rank r holds the r-th block of queries, keys and values,
// each f32[T, d]); the key/value blocks travel around the ring, and each rank
// folds every block into an online softmax (running row max m, running sum l,
// an accumulator rescaled whenever the max grows), so no rank ever holds the
// whole sequence. Double buffering: the next block is received into one buffer
// while the current one is computed on, so its transfer overlaps the compute.
//
//   out = softmax(Q K^T / sqrt(d)) V   over the full sequence (no mask)
//
// The loop runs `world` steps. With --steps S (S >= world) it runs S, as the
// .sf does, adding ((2*world-1-s)/world - 1) * 1e9 to step s's scores: 0 for
// s < world, at most -1e9 after, where exp gives exactly 0, the max and sum do
// not move and the accumulator gains exact zeros. --check then also checks that
// claim: the S-step result must be bitwise equal to the world-step result.
//
//   symmflow launch --nproc 4 -- build/dev/examples/ring_attention --check
//   symmflow launch --nproc 4 -- build/dev/examples/ring_attention --check --steps 6
//   symmflow launch --nproc 2 -- build/dev/examples/ring_attention --iters 50 --size 512
#include <cmath>

#include "example_harness.h"

namespace sf = symmflow;

constexpr const char* kUsage = R"(usage: ring_attention [--check] [--iters N] [--size T] [--steps S]
  Attention over a sequence of world*T tokens, T per rank, head dimension 64.
  --check     run eagerly and through sf::compile, compare bitwise on every rank, and compare
              with softmax(Q K^T / sqrt(d)) V computed directly over the gathered sequence
  --iters N   print the median seconds per call of each mode over N calls (rank 0)
  --size T    tokens per rank (default 256)
  --steps S   unroll S >= world ring steps, the extra ones no-ops as in ring_attention.sf
              (default: world)
)";

constexpr int64_t kHeadDim = 64;

// The online softmax over the blocks seen so far: out = acc / l.
struct OnlineSoftmax {
  sf::Tensor m, l, acc;  // f32[T, 1], f32[T, 1], f32[T, d]

  void fold(const sf::Tensor& scores, const sf::Tensor& v) {
    if (!m.defined()) {
      m = sf::amax(scores, {1}, true);
      auto p = sf::exp(scores - m);
      l = sf::sum(p, {1}, true);
      acc = sf::mm(p, v);
      return;
    }
    auto m_new = sf::maximum(m, sf::amax(scores, {1}, true));
    auto p = sf::exp(scores - m_new);
    auto rescale = sf::exp(m - m_new);  // exactly 1 where the max did not grow
    l = l * rescale + sf::sum(p, {1}, true);
    acc = acc * rescale + sf::mm(p, v);
    m = m_new;
  }
};

// 0 for steps s < world, <= -1e9 for the no-op steps after (see the top).
int64_t noop_bias(int s, int world) {
  auto floor_div = [](int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); };
  return (floor_div(2 * world - 1 - s, world) - 1) * 1000000000;
}

// q, k, v: this rank's blocks, f32[T, d]. kbuf, vbuf: f32[2, T, d], the double
// buffers the next block is received into. steps = 0: world steps, no bias.
sf::Tensor ring_attention(sf::Tensor q, sf::Tensor k, sf::Tensor v, sf::Tensor kbuf, sf::Tensor vbuf, int steps) {
  auto& g = sf::dist::world();
  const int world = g.size(), next = (g.rank() + 1) % world, prev = (g.rank() - 1 + world) % world;
  const bool biased = steps > 0;
  if (!biased) steps = world;
  auto qs = q * (1.0 / std::sqrt(double(q.size(1))));
  OnlineSoftmax st;
  sf::Tensor cur_k = k, cur_v = v;  // step s holds the block of rank (rank - s) mod world
  for (int s = 0; s < steps; ++s) {
    std::vector<sf::dist::Work> works;
    sf::Tensor next_k, next_v;
    if (s + 1 < steps) {  // pass the current block on, receive the next into the other buffer
      next_k = sf::select(kbuf, 0, (s + 1) % 2);
      next_v = sf::select(vbuf, 0, (s + 1) % 2);
      works = sf::dist::batch_isend_irecv({sf::dist::P2POp::send(cur_k, next, /*tag=*/0),
                                           sf::dist::P2POp::send(cur_v, next, /*tag=*/1),
                                           sf::dist::P2POp::recv(next_k, prev, /*tag=*/0),
                                           sf::dist::P2POp::recv(next_v, prev, /*tag=*/1)});
    }
    auto scores = sf::mm(qs, sf::transpose(cur_k, 0, 1));  // overlaps the transfer
    if (biased && s > 0) scores = scores + sf::Scalar(noop_bias(s, world));
    st.fold(scores, cur_v);
    for (auto& w : works) w.wait();
    cur_k = next_k;
    cur_v = next_v;
  }
  return st.acc / st.l;
}

// softmax(Q K^T / sqrt(d)) V with K and V gathered from every rank, eagerly.
sf::Tensor direct_attention(const sf::Tensor& q, const sf::Tensor& k, const sf::Tensor& v) {
  const int world = sf::dist::world().size();
  auto gather = [&](const sf::Tensor& t) {
    auto in = sf::symm::empty(t.sizes(), t.dtype()), out = sf::symm::empty({world * t.size(0), t.size(1)}, t.dtype());
    sf::copy_(in, t);
    sf::dist::all_gather(out, in);
    return out;
  };
  auto scores = sf::mm(q, sf::transpose(gather(k), 0, 1)) * (1.0 / std::sqrt(double(q.size(1))));
  return sf::mm(sf::softmax(scores, 1), gather(v));
}

int main(int argc, char** argv) {
  const auto opt = sfex::start(argc, argv, kUsage, {.size = 256, .steps = -1});
  const int world = sf::dist::world().size(), rank = sf::dist::world().rank();
  if (opt.steps != -1 && opt.steps < world) {
    if (sfex::is_root()) fmt::print(stderr, "ring_attention: --steps must be >= world ({})\n{}", world, kUsage);
    return 2;
  }
  const int steps = opt.steps == -1 ? 0 : opt.steps;
  const int64_t t = opt.size, d = kHeadDim;
  // Seeds differ per rank and per tensor: every block of the sequence is different.
  auto q = sf::randn({t, d}, /*seed=*/3 * rank), k = sf::randn({t, d}, 3 * rank + 1);
  auto v = sf::randn({t, d}, 3 * rank + 2);
  auto make_inputs = [&] {
    auto symmetric = [](const sf::Tensor& x) {
      auto s = sf::symm::empty(x.sizes(), x.dtype());
      sf::copy_(s, x);
      return s;
    };
    auto kbuf = sf::symm::empty({2, t, d}), vbuf = sf::symm::empty({2, t, d});
    sf::fill_(kbuf, 0.0);
    sf::fill_(vbuf, 0.0);
    return sfex::Inputs{symmetric(q), symmetric(k), symmetric(v), kbuf, vbuf};
  };
  auto attend = [steps](sf::Tensor q, sf::Tensor k, sf::Tensor v, sf::Tensor kb, sf::Tensor vb) {
    return ring_attention(q, k, v, kb, vb, steps);
  };
  auto fast = sf::compile(attend, "ring_attention");
  int status = sfex::run(
      opt, make_inputs, [&](const sfex::Inputs& in) { return std::vector{attend(in[0], in[1], in[2], in[3], in[4])}; },
      [&](const sfex::Inputs& in) { return std::vector{fast(in[0], in[1], in[2], in[3], in[4])}; });
  if (!opt.check) return status;

  // It is attention: against the direct formula, to a tolerance (the order of
  // the additions differs).
  auto in = make_inputs();
  auto out = ring_attention(in[0], in[1], in[2], in[3], in[4], steps);
  auto ref = direct_attention(q, k, v);
  const double err = sf::amax(sf::maximum(out - ref, ref - out), {0, 1}).item();
  const double tol = 1e-5 * (1.0 + sf::amax(sf::maximum(ref, -ref), {0, 1}).item());
  bool ok = err <= tol;
  if (!ok) fmt::print("rank {}: max |ring - direct| = {:.3g} > {:.3g}\n", rank, err, tol);
  // The no-op steps are exact: S steps give bitwise what world steps give.
  if (steps > world) {
    auto plain = make_inputs();
    ok = sfex::same_bits(ring_attention(plain[0], plain[1], plain[2], plain[3], plain[4], 0), out,
                         fmt::format("{} steps vs {} steps", world, steps)) && ok;
  }
  const bool every = sfex::all_ranks(ok);
  if (sfex::is_root())
    fmt::print("reference: {} (softmax(Q K^T / sqrt(d)) V over {} tokens{}; rank 0's max error {:.3g})\n",
               every ? "OK" : "MISMATCH", world * t,
               steps > world ? fmt::format(", {} no-op steps bitwise exact", steps - world) : "", err);
  return every ? status : 1;
}
