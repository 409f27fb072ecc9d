// A tensor-parallel MLP block (Megatron style), the C++ twin of tp_mlp.sf: x is
// replicated, W1 is split by columns and W2 by rows across the ranks; each rank
// computes its slice of the hidden layer, and an all_reduce sums the partial
// outputs. The batch is split in two micro-batches, so that micro-batch 1's
// matmuls have no dependency on micro-batch 0's all_reduce: compiled, that
// all_reduce can be in flight while they run. Its input comes from aten::mm,
// which the compiler plans straight into the symmetric arena (zero copy).
//
//   symmflow launch --nproc 2 -- build/dev/examples/tp_mlp --check
//   symmflow launch --nproc 2 -- build/dev/examples/tp_mlp --iters 50 --size 512
#include "example_harness.h"

namespace sf = symmflow;

constexpr const char* kUsage = R"(usage: tp_mlp [--check] [--iters N] [--size B]
  A tensor-parallel MLP: x f32[B, 256] replicated, 512 hidden columns per rank, two micro-batches.
  --check     run eagerly and through sf::compile, compare every output bitwise on every rank
  --iters N   print the median seconds per call of each mode over N calls (rank 0)
  --size B    batch rows (default 64; even: two micro-batches of B/2)
)";

constexpr int64_t kModel = 256, kHiddenPerRank = 512;

// x f32[B, model], w1 f32[model, hidden], b1 f32[hidden], w2 f32[hidden, model]
// (this rank's shards) -> f32[B, model], the sum over ranks.
sf::Tensor tp_mlp(sf::Tensor x, sf::Tensor w1, sf::Tensor b1, sf::Tensor w2) {
  const int64_t half = x.size(0) / 2;
  auto partial = [&](const sf::Tensor& xm) { return sf::mm(sf::gelu(sf::mm(xm, w1) + b1), w2); };
  auto y0 = partial(sf::slice(x, 0, 0, half));
  sf::dist::all_reduce_(y0);  // compiled: in flight while micro-batch 1 is computed
  auto y1 = partial(sf::slice(x, 0, half, x.size(0)));
  sf::dist::all_reduce_(y1);
  return sf::cat({y0, y1}, 0);
}

int main(int argc, char** argv) {
  const auto opt = sfex::start(argc, argv, kUsage, {.size = 64});
  if (opt.size % 2 != 0) {
    if (sfex::is_root()) fmt::print(stderr, "tp_mlp: --size must be even (two micro-batches)\n{}", kUsage);
    return 2;
  }
  const int rank = sf::dist::world().rank();
  auto make_inputs = [&] {
    return sfex::Inputs{sf::randn({opt.size, kModel}, /*seed=*/1000),  // the same on every rank
                        sf::randn({kModel, kHiddenPerRank}, 3 * rank) * 0.0625,
                        sf::randn({kHiddenPerRank}, 3 * rank + 1) * 0.0625,
                        sf::randn({kHiddenPerRank, kModel}, 3 * rank + 2) * 0.0625};
  };
  auto fast = sf::compile(tp_mlp, "tp_mlp");
  return sfex::run(
      opt, make_inputs, [](const sfex::Inputs& in) { return std::vector{tp_mlp(in[0], in[1], in[2], in[3])}; },
      [&](const sfex::Inputs& in) { return std::vector{fast(in[0], in[1], in[2], in[3])}; });
}
