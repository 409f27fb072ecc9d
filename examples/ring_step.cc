// DESIGN.md §6, runnable: one ring step (send x to the next rank, receive y from
// the previous one, compute while the transfer is in flight) written once, run
// eagerly and compiled, and checked bitwise equal on every rank.
//
//   symmflow launch --nproc 4 -- build/dev/examples/ring_step
#include <symmflow/symmflow.h>

#include <cstdio>
#include <cstring>

namespace sf = symmflow;

sf::Tensor ring_step(sf::Tensor x0, sf::Tensor y0) {
  auto& g = sf::dist::world();
  int nxt = (g.rank() + 1) % g.size(), prv = (g.rank() + g.size() - 1) % g.size();
  auto works = sf::dist::batch_isend_irecv({sf::dist::P2POp::send(x0, nxt), sf::dist::P2POp::recv(y0, prv)});
  auto t0 = x0 * 2 + 1;
  for (auto& w : works) w.wait();
  return y0 + t0;
}

int main() {
  sf::dist::init();                        // from the launcher's environment
  const int n = 1 << 20;
  auto x = sf::randn({n}, /*seed=*/sf::dist::world().rank());
  auto y_eager = sf::zeros({n}), y_compiled = sf::zeros({n});

  auto eager = ring_step(x, y_eager);      // op by op
  auto step = sf::compile(ring_step, "ring_step");
  auto out = step(x, y_compiled);          // traced on first call, then compiled
  auto again = step(x, y_compiled);        // replayed from the cache

  bool same = std::memcmp(eager.data_ptr(), out.data_ptr(), eager.nbytes()) == 0 &&
              std::memcmp(eager.data_ptr(), again.data_ptr(), eager.nbytes()) == 0 &&
              std::memcmp(y_eager.data_ptr(), y_compiled.data_ptr(), y_eager.nbytes()) == 0;
  std::printf("rank %d: eager and compiled ring_step are %s (%zu program%s cached)\n", sf::dist::world().rank(),
              same ? "bitwise equal" : "DIFFERENT", step.programs(), step.programs() == 1 ? "" : "s");
  return same ? 0 : 1;
}
