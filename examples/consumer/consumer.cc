// A program outside symmflow's tree, using only the installed public API: an
// in-place all_reduce_ over symmetric memory, checked on every rank.
//   <prefix>/bin/symmflow launch --nproc 2 -- /tmp/consumer/consumer
#include <symmflow/symmflow.h>
#include <symmflow/version.h>

#include <fmt/format.h>

namespace sf = symmflow;

int main() {
  sf::dist::init();  // reads `symmflow launch`'s environment
  auto& g = sf::dist::world();
  auto x = sf::symm::empty({1024}, sf::DType::f32);  // the same offset on every rank
  sf::kernels::fill_(x, g.rank() + 1);
  sf::dist::all_reduce_(x);  // in place: 1 + 2 + ... + world
  const float want = float(g.size() * (g.size() + 1) / 2);
  const float* p = x.data<float>();
  for (int64_t i = 0; i < x.numel(); ++i)
    if (p[i] != want) {
      fmt::print(stderr, "consumer: rank {}: element {} is {}, expected {}\n", g.rank(), i, p[i], want);
      return 1;
    }
  fmt::print("consumer (symmflow {}): rank {} of {}: all_reduce_ gave {} everywhere\n", SYMMFLOW_VERSION, g.rank(),
             g.size(), want);
  return 0;
}
