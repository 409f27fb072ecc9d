// f32 gelu in symmflow's own code (kernels/gelu_erf.h) against the oneDNN
// primitive it reproduces (the one PyTorch 1.13 runs), one thread:
//
//   build/dev/bench/sf_gelu_erf               # ns per element at 4K, 64K and 1M
//   build/dev/bench/sf_gelu_erf --exhaustive  # every f32 bit pattern, each width
//                                             # against oneDNN (15 s on an AVX-512
//                                             # core); exit 1 on the first difference
//
// ONEDNN_MAX_CPU_ISA=AVX2 makes oneDNN run its AVX2 kernel instead (the one an
// AVX2-only CPU gets); SYMMFLOW_SIMD=avx2 leaves symmflow's 16 lanes out.
#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "symmflow/kernels/gelu_erf.h"
#include "symmflow/kernels/simd.h"
#include "symmflow/tools/bench_floats.h"
#include "symmflow/tools/bench_timing.h"

namespace vec = symmflow::kernels::vec;
namespace simd = symmflow::kernels::simd;

namespace {

std::vector<int> widths() {
  std::vector<int> w{0};
  if (simd::avx2()) w.push_back(8);
  if (simd::avx512()) w.push_back(16);
  return w;
}

const char* name(int lanes) { return lanes == 0 ? "oneDNN" : lanes == 8 ? "8 lanes" : "16 lanes"; }

int exhaustive() {
  std::vector<float> ref, got;
  const bool same = sfbench::for_every_f32([&](const float* x, int64_t n) {
    ref.resize(size_t(n));
    got.resize(size_t(n));
    vec::gelu_erf_lanes(0, x, ref.data(), n);
    for (int lanes : widths()) {
      if (lanes == 0) continue;
      vec::gelu_erf_lanes(lanes, x, got.data(), n);
      if (const int64_t i = sfbench::first_bit_difference(ref.data(), got.data(), n); i >= 0) {
        fmt::print("x = 0x{:08x} ({}): oneDNN 0x{:08x}, {} 0x{:08x}\n", sfbench::bits(x[i]), x[i],
                   sfbench::bits(ref[size_t(i)]), name(lanes), sfbench::bits(got[size_t(i)]));
        return false;
      }
    }
    return true;
  });
  if (!same) return 1;
  fmt::print("all 2^32 f32 inputs: every width gives oneDNN's bits\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string_view(argv[1]) == "--exhaustive") return exhaustive();
  if (argc > 1) {
    fmt::print(stderr, "usage: sf_gelu_erf [--exhaustive]\n");
    return 2;
  }
  fmt::print("{:>8} {:>10} {:>14}\n", "elements", "code", "ns/element");
  for (int64_t n : {int64_t(4096), int64_t(65536), int64_t(1) << 20}) {
    std::vector<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) x[size_t(i)] = -6.0f + 12.0f * float(i) / float(n);
    for (int lanes : widths()) {
      sfbench::Timing t = sfbench::time_op([&] { vec::gelu_erf_lanes(lanes, x.data(), y.data(), n); });
      fmt::print("{:>8} {:>10} {:>14.3f}\n", n, name(lanes), t.median * 1e9 / double(n));
    }
  }
}
