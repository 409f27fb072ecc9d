// `make demo`: an all_reduce on symmetric memory, checked and timed.
//
//   symmflow launch --nproc 2 -- build/dev/examples/allreduce_demo
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "symmflow/symmflow.h"

namespace sf = symmflow;

static double median_us(const std::function<void()>& op, int reps) {
  std::vector<double> t;
  for (int trial = 0; trial < 7; ++trial) {
    sf::dist::world().barrier("demo");
    auto s = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) op();
    t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - s).count() / reps);
  }
  std::sort(t.begin(), t.end());
  return t[3];
}

int main() {
  sf::dist::init();
  auto& g = sf::dist::world();
  const int W = g.size(), r = g.rank();

  // Every rank contributes rank + 1; the sum is W (W + 1) / 2 everywhere.
  sf::Tensor x = sf::symm::empty({1 << 20}, sf::DType::f32);
  sf::kernels::fill_(x, sf::Scalar(double(r + 1)));
  auto res = sf::dist::all_reduce_(x);
  const float want = float(W * (W + 1) / 2);
  bool ok = x.data<float>()[0] == want && x.data<float>()[x.numel() - 1] == want;
  fmt::print("rank {}/{}: all_reduce_ of 4 MiB symmetric f32 ({}, {} staged bytes): every element = {} ({})\n", r,
             W, sf::dist::algo_name(res.algo), res.staged_bytes, x.data<float>()[0], ok ? "correct" : "WRONG");

  for (int64_t bytes : {int64_t(1) << 10, int64_t(4) << 20}) {
    sf::Tensor in = sf::symm::empty({bytes / 4}, sf::DType::f32);
    sf::Tensor out = sf::Tensor::empty({bytes / 4}, sf::DType::f32);
    sf::kernels::fill_(in, sf::Scalar(1.0));
    double us = median_us([&] { sf::dist::all_reduce(g, out, in, sf::dist::ReduceOp::sum); },
                          bytes < 65536 ? 2000 : 20);
    if (r == 0)
      fmt::print("rank 0: all_reduce of {:>7} bytes: median {:.2f} us ({:.2f} GB/s)\n", bytes, us,
                 double(bytes) / (us * 1e3));
  }
  return ok ? 0 : 1;
}
