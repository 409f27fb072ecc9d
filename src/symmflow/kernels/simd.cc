#include "symmflow/kernels/simd.h"

#include "symmflow/core/params.h"

namespace symmflow::kernels::simd {

bool avx2() {
  static const bool ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return ok;
}

bool avx512() {
  static const bool ok = avx2() && __builtin_cpu_supports("avx512f") &&
                         !(params::is_set("SYMMFLOW_SIMD") && params::word("SYMMFLOW_SIMD") == "avx2");
  return ok;
}

}  // namespace symmflow::kernels::simd
