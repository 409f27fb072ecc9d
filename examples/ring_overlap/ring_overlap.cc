// The C++ twin of ring_overlap.sf: two ring
// exchanges (send to the next rank, receive from the previous one), each with
// compute that does not touch the buffers in flight, so the transfer can overlap
// it. A scheduler that moved the second exchange past the compute that reads the
// first one's result would give garbage; here the compiled program is bitwise
// equal to eager on every rank.
//
//   symmflow launch --nproc 4 -- build/dev/examples/ring_overlap --check
//   symmflow launch --nproc 2 -- build/dev/examples/ring_overlap --iters 50 --size 4194304
#include "example_harness.h"

namespace sf = symmflow;

constexpr const char* kUsage = R"(usage: ring_overlap [--check] [--iters N] [--size N]
  Two ring exchanges interleaved with compute, on f32[N] per rank (docs/examples.md).
  --check     run eagerly and through sf::compile, compare every output bitwise on every rank
  --iters N   print the median seconds per call of each mode over N calls (rank 0)
  --size N    elements per rank (default 1048576)
)";

// x0 goes to the next rank while x0 * 2 + 1 is computed; y0 (from the previous
// rank) is read only after its wait. The second exchange sends that result on.
sf::Tensor ring_overlap(sf::Tensor x0, sf::Tensor y0, sf::Tensor y1) {
  auto& g = sf::dist::world();
  const int nxt = (g.rank() + 1) % g.size(), prv = (g.rank() + g.size() - 1) % g.size();
  auto works = sf::dist::batch_isend_irecv({sf::dist::P2POp::send(x0, nxt), sf::dist::P2POp::recv(y0, prv)});
  auto t1 = x0 * 2 + 1;  // overlaps the first exchange
  for (auto& w : works) w.wait();
  auto a = y0 + t1;
  works = sf::dist::batch_isend_irecv({sf::dist::P2POp::send(a, nxt), sf::dist::P2POp::recv(y1, prv)});
  auto t2 = a * 1.000244140625;  // overlaps the second: reads the send buffer, writes nothing in flight
  for (auto& w : works) w.wait();
  return y1 + t2;
}

int main(int argc, char** argv) {
  const auto opt = sfex::start(argc, argv, kUsage, {.size = 1 << 20});
  const int rank = sf::dist::world().rank();
  // Symmetric buffers: the exchanges are zero-copy eagerly as well as compiled.
  auto make_inputs = [&] {
    sfex::Inputs in;
    for (int i = 0; i < 3; ++i) {
      auto t = sf::symm::empty({opt.size}, sf::DType::f32);
      sf::copy_(t, i == 0 ? sf::randn({opt.size}, /*seed=*/rank) : sf::zeros({opt.size}));
      in.push_back(t);
    }
    return in;
  };
  auto fast = sf::compile(ring_overlap, "ring_overlap");
  return sfex::run(
      opt, make_inputs, [](const sfex::Inputs& in) { return std::vector{ring_overlap(in[0], in[1], in[2])}; },
      [&](const sfex::Inputs& in) { return std::vector{fast(in[0], in[1], in[2])}; });
}
