#include "symmflow/kernels/simd.h"

namespace symmflow::kernels::simd {

bool avx2() {
  static const bool ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return ok;
}

}  // namespace symmflow::kernels::simd
