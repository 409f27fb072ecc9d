#include "symmflow/kernels/onednn_threads.h"

#include <omp.h>

#include "symmflow/core/params.h"

namespace symmflow::kernels {

namespace {
int wanted() {
  static const int threads = int(params::integer("SYMMFLOW_BLAS_THREADS"));
  return threads;
}
}  // namespace

OneDnnThreads::OneDnnThreads() : before_(omp_get_max_threads()) {
  if (before_ != wanted()) omp_set_num_threads(wanted());
}

OneDnnThreads::~OneDnnThreads() {
  if (before_ != wanted()) omp_set_num_threads(before_);
}

}  // namespace symmflow::kernels
