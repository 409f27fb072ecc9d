// oneDNN runs on OpenMP and takes the calling thread's OpenMP thread count. A
// OneDnnThreads in scope sets that count to SYMMFLOW_BLAS_THREADS (read once,
// default 1: ranks share the cores) and restores the caller's at the end, so a
// torch in the same process keeps its own setting. With a fixed thread count
// oneDNN's results do not depend on timing (matmul.cc's sgemm, vec_math.cc's gelu).
//
//   { OneDnnThreads threads; dnnl_sgemm(...); }
#pragma once

namespace symmflow::kernels {

class OneDnnThreads {
 public:
  OneDnnThreads();
  ~OneDnnThreads();
  OneDnnThreads(const OneDnnThreads&) = delete;
  OneDnnThreads& operator=(const OneDnnThreads&) = delete;

 private:
  int before_;
};

}  // namespace symmflow::kernels
