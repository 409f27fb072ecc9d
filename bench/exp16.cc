// f32 exp in 16 lanes in symmflow's own code (kernels/vec_math.cc's exp16:
// SLEEF's algorithm with one scalef for its ldexp) against the 8-lane SLEEF
// exp PyTorch 1.13 runs, one thread; sigmoid and silu, which call it, too; and
// log and log2 (SLEEF's 16-lane ones with their NaNs made the 8 lanes' NaN):
//
//   build/dev/bench/sf_exp16               # ns per element at 4K, 64K and 1M (and
//                                          # SLEEF's own 16-lane exp, the one replaced)
//   build/dev/bench/sf_exp16 --exhaustive  # every f32 bit pattern, 16 lanes against
//                                          # 8; exit 1 on the first difference
//
// Needs AVX-512F (16 lanes); without it the program says so and exits 0.
#include <fmt/format.h>
#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "symmflow/kernels/simd.h"
#include "symmflow/kernels/vec_math.h"
#include "symmflow/tools/bench_floats.h"
#include "symmflow/tools/bench_timing.h"

namespace vec = symmflow::kernels::vec;
namespace simd = symmflow::kernels::simd;

// What the 16-lane exp was before exp16: SLEEF's deterministic 16-lane call.
extern "C" SF_AVX512 __m512 Sleef_finz_expf16_u10avx512f(__m512);

namespace {

SF_AVX512 void sleef_exp16(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, Sleef_finz_expf16_u10avx512f(_mm512_loadu_ps(x + i)));
}

constexpr std::pair<vec::Fn, const char*> kFns[] = {
    {vec::Fn::exp, "exp"}, {vec::Fn::sigmoid, "sigmoid"}, {vec::Fn::silu, "silu"}, {vec::Fn::log, "log"},
    {vec::Fn::log2, "log2"}};

int exhaustive() {
  std::vector<float> ref, got;
  const bool same = sfbench::for_every_f32([&](const float* x, int64_t n) {
    ref.resize(size_t(n));
    got.resize(size_t(n));
    for (const auto& [f, name] : kFns) {
      vec::map_lanes(8, f, x, ref.data(), n);
      vec::map_lanes(16, f, x, got.data(), n);
      if (const int64_t i = sfbench::first_bit_difference(ref.data(), got.data(), n); i >= 0) {
        fmt::print("{}(0x{:08x} = {}): 8 lanes 0x{:08x}, 16 lanes 0x{:08x}\n", name, sfbench::bits(x[i]), x[i],
                   sfbench::bits(ref[size_t(i)]), sfbench::bits(got[size_t(i)]));
        return false;
      }
    }
    return true;
  });
  if (!same) return 1;
  fmt::print("all 2^32 f32 inputs: exp, sigmoid, silu, log and log2 in 16 lanes give the 8 lanes' bits\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (!simd::avx512() || !simd::avx2()) {
    fmt::print("sf_exp16: this CPU has no AVX-512F (or no AVX2): nothing to compare\n");
    return 0;
  }
  if (argc > 1 && std::string_view(argv[1]) == "--exhaustive") return exhaustive();
  if (argc > 1) {
    fmt::print(stderr, "usage: sf_exp16 [--exhaustive]\n");
    return 2;
  }
  fmt::print("{:>8} {:>8} {:>12} {:>12} {:>8} {:>14}\n", "function", "elements", "8 lanes ns", "16 lanes ns", "16 / 8",
             "SLEEF 16 ns");
  for (const auto& [f, name] : kFns)
    for (int64_t n : {int64_t(4096), int64_t(65536), int64_t(1) << 20}) {
      std::vector<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) x[size_t(i)] = -10.0f + 20.0f * float(i) / float(n);
      double ns[2];
      int k = 0;
      for (int lanes : {8, 16}) {
        sfbench::Timing t = sfbench::time_op([&] { vec::map_lanes(lanes, f, x.data(), y.data(), n); });
        ns[k++] = t.median * 1e9 / double(n);
      }
      // exp only: SLEEF's own 16-lane call, what exp16 replaced, in the same run.
      std::string sleef = "-";
      if (f == vec::Fn::exp)
        sleef = fmt::format("{:.3f}", sfbench::time_op([&] { sleef_exp16(x.data(), y.data(), n); }).median * 1e9 / double(n));
      fmt::print("{:>8} {:>8} {:>12.3f} {:>12.3f} {:>8.2f} {:>14}\n", name, n, ns[0], ns[1], ns[1] / ns[0], sleef);
    }
  return 0;
}
