// A 2-D heat equation (explicit 5-point stencil) on a grid split in row strips
// across the ranks, the C++ twin of halo2d.sf. The rows wrap around (rank 0's
// upper neighbour is rank world-1), so every rank runs the same program; the
// left and right columns are fixed (Dirichlet). Each rank's strip has one halo
// row above and one below:
//
//   row 0        halo: the previous rank's last owned row
//   rows 1..H    owned
//   row H+1      halo: the next rank's first owned row
//
// Per time step the first and last owned rows go out and the halos come in
// (P2P on slices of the grid: zero copy), and the interior rows 2..H-1, which
// need no halo, are computed while they are in flight; rows 1 and H follow
// the wait. Two grids take turns (Jacobi): u -> v -> u -> ...
//
//   symmflow launch --nproc 2 -- build/dev/examples/halo2d --check
//   symmflow launch --nproc 2 -- build/dev/examples/halo2d --iters 50 --size 512 --steps 8
#include "example_harness.h"

namespace sf = symmflow;

constexpr const char* kUsage = R"(usage: halo2d [--check] [--iters N] [--size N] [--steps S]
  A 2-D heat equation on an N x N strip per rank (plus 2 halo rows), S time steps per call.
  --check     run eagerly and through sf::compile, compare every output and grid bitwise on every rank
  --iters N   print the median seconds per call of each mode over N calls (rank 0)
  --size N    rows and columns per rank (default 256; at least 3)
  --steps S   time steps per call (default 4; even, so the result is back in u)
)";

constexpr double kAlpha = 0.2;  // diffusion number dt*k/h^2: stable up to 0.25

// dst[rows, 1:-1] = the stencil of src over those rows: c + alpha * (n + s + w + e - 4 c).
// Columns 0 and -1 of dst are not written: they keep the fixed boundary.
void stencil_rows(const sf::Tensor& src, const sf::Tensor& dst, int64_t begin, int64_t end) {
  auto rows = [&](int64_t shift) { return sf::slice(src, 0, begin + shift, end + shift); };
  auto c = sf::slice(rows(0), 1, 1, -1), w = sf::slice(rows(0), 1, 0, -2), e = sf::slice(rows(0), 1, 2, src.size(1));
  auto n = sf::slice(rows(-1), 1, 1, -1), s = sf::slice(rows(1), 1, 1, -1);
  auto lap = (n + s) + (w + e) - c * 4.0;
  sf::copy_(sf::slice(sf::slice(dst, 0, begin, end), 1, 1, -1), c + lap * kAlpha);
}

// u: the grid, f32[H+2, W], advanced by `steps` (even) time steps in place.
// v: a scratch grid of the same shape (its edge columns are set from u's).
// Returns the total heat of the owned interior after each step, f32[steps].
sf::Tensor heat_steps(sf::Tensor u, sf::Tensor v, int steps) {
  auto& g = sf::dist::world();
  const int next = (g.rank() + 1) % g.size(), prev = (g.rank() - 1 + g.size()) % g.size();
  const int64_t h = u.size(0) - 2;
  for (int64_t col : {int64_t(0), u.size(1) - 1})  // the Dirichlet columns, identical in both grids
    sf::copy_(sf::narrow(v, 1, col, 1), sf::narrow(u, 1, col, 1));
  std::vector<sf::Tensor> heat;
  for (int step = 0; step < steps; ++step) {
    const sf::Tensor& src = step % 2 == 0 ? u : v;
    const sf::Tensor& dst = step % 2 == 0 ? v : u;
    // Tags tell the two directions apart when prev == next (2 ranks).
    auto works = sf::dist::batch_isend_irecv({
        sf::dist::P2POp::send(sf::slice(src, 0, 1, 2), prev, /*tag=*/0),          // first owned row, up
        sf::dist::P2POp::send(sf::slice(src, 0, h, h + 1), next, /*tag=*/1),      // last owned row, down
        sf::dist::P2POp::recv(sf::slice(src, 0, 0, 1), prev, /*tag=*/1),          // upper halo
        sf::dist::P2POp::recv(sf::slice(src, 0, h + 1, h + 2), next, /*tag=*/0),  // lower halo
    });
    stencil_rows(src, dst, 2, h);  // rows 2..H-1: no halo needed, overlaps the exchange
    for (auto& w : works) w.wait();
    stencil_rows(src, dst, 1, 2);       // row 1 reads the upper halo
    stencil_rows(src, dst, h, h + 1);   // row H reads the lower halo
    heat.push_back(sf::unsqueeze(sf::sum(sf::slice(sf::slice(dst, 0, 1, h + 1), 1, 1, -1)), 0));
  }
  return sf::cat(heat);
}

int main(int argc, char** argv) {
  const auto opt = sfex::start(argc, argv, kUsage, {.size = 256, .steps = 4});
  if (opt.size < 3 || opt.steps % 2 != 0) {
    if (sfex::is_root()) fmt::print(stderr, "halo2d: --size must be >= 3 and --steps even\n{}", kUsage);
    return 2;
  }
  const int rank = sf::dist::world().rank();
  const int64_t n = opt.size;
  // Symmetric grids (the exchanged rows are zero-copy eagerly too). Random
  // interior, left column hot (1), right column cold (-1).
  auto make_inputs = [&] {
    auto u = sf::symm::empty({n + 2, n}, sf::DType::f32), v = sf::symm::empty({n + 2, n}, sf::DType::f32);
    sf::copy_(u, sf::randn({n + 2, n}, /*seed=*/rank));
    sf::fill_(sf::narrow(u, 1, 0, 1), 1.0);
    sf::fill_(sf::narrow(u, 1, n - 1, 1), -1.0);
    sf::fill_(v, 0.0);
    return sfex::Inputs{u, v};
  };
  auto step = [steps = opt.steps](sf::Tensor u, sf::Tensor v) { return heat_steps(u, v, steps); };
  auto fast = sf::compile(step, "halo2d");
  return sfex::run(
      opt, make_inputs, [&](const sfex::Inputs& in) { return std::vector{step(in[0], in[1])}; },
      [&](const sfex::Inputs& in) { return std::vector{fast(in[0], in[1])}; });
}
