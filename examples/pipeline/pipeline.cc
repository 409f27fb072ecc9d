// A forward pipeline over the ranks, the C++ twin of pipeline.sf: stage r holds
// the weights w of layer r and runs relu(h @ w) on each micro-batch; stage 0
// reads its micro-batches from x, the others receive them from the stage before,
// and every stage but the last sends its result on. The ranks branch on their
// rank, so each traces a different program (issue 17, "ranks that run different
// code"); sf::compile compiles each rank's own, and the ranks agree on one
// symmetric layout when the compiled programs load.
//
// Each stage keeps two receives posted ahead (micro-batches m+1 and m+2 arrive
// while m is computed) and sends each result as soon as it is made, so send and
// receive interleave with compute: a forward-only pipeline's steady state (the
// forward half of 1F1B), micro-batch by micro-batch.
//
//   symmflow launch --nproc 4 -- build/dev/examples/pipeline --check
//   symmflow launch --nproc 2 -- build/dev/examples/pipeline --iters 50 --size 256 --steps 8
#include "example_harness.h"

namespace sf = symmflow;

constexpr const char* kUsage = R"(usage: pipeline [--check] [--iters N] [--size N] [--steps M]
  A forward pipeline: one stage per rank, M micro-batches of 4 rows of f32[N].
  --check     run eagerly and through sf::compile, compare every output bitwise on every rank
  --iters N   print the median seconds per call of each mode over N calls (rank 0)
  --size N    features per row, the stages' weights are f32[N, N] (default 64)
  --steps M   micro-batches (default 4)
)";

constexpr int64_t kRows = 4;  // rows per micro-batch
int micro_batches = 4;

// x: f32[M * 4, N] (read by stage 0), w: this stage's f32[N, N]. Returns what
// this stage computed, all micro-batches in order: f32[M * 4, N].
sf::Tensor pipeline(sf::Tensor x, sf::Tensor w) {
  auto& g = sf::dist::world();
  const int rank = g.rank();
  const bool first = rank == 0, last = rank == g.size() - 1;
  const int m_all = micro_batches;
  std::vector<sf::Tensor> received, outs;
  std::vector<sf::dist::Work> recvs, sends;
  auto post = [&](int m) {  // receive micro-batch m from the stage before
    received.push_back(sf::zeros({kRows, x.size(1)}));
    recvs.push_back(sf::dist::irecv(received.back(), rank - 1, /*tag=*/m));
  };
  for (int m = 0; !first && m < std::min(2, m_all); ++m) post(m);
  for (int m = 0; m < m_all; ++m) {
    sf::Tensor in;
    if (first) {
      in = sf::slice(x, 0, m * kRows, (m + 1) * kRows);
    } else {
      recvs[size_t(m)].wait();
      in = received[size_t(m)];
    }
    auto a = sf::relu(sf::mm(in, w));
    if (!last) sends.push_back(sf::dist::isend(a, rank + 1, /*tag=*/m));
    if (!first && m + 2 < m_all) post(m + 2);
    outs.push_back(a);
  }
  for (auto& s : sends) s.wait();
  return sf::cat(outs);
}

int main(int argc, char** argv) {
  const auto opt = sfex::start(argc, argv, kUsage, {.size = 64, .steps = 4});
  micro_batches = opt.steps;
  const int rank = sf::dist::world().rank();
  auto make_inputs = [&] {
    return sfex::Inputs{sf::randn({micro_batches * kRows, opt.size}, /*seed=*/100),
                        sf::randn({opt.size, opt.size}, /*seed=*/rank) * (1.0 / 8)};
  };
  auto fast = sf::compile(pipeline, "pipeline");
  return sfex::run(
      opt, make_inputs, [](const sfex::Inputs& in) { return std::vector{pipeline(in[0], in[1])}; },
      [&](const sfex::Inputs& in) { return std::vector{fast(in[0], in[1])}; });
}
