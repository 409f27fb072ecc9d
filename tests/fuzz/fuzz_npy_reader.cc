// libFuzzer: any bytes as a .npy file, read through exec::read_npy (the reader of
// `symmflow run --inputs`) from an in-memory file. A symmflow::Error is the
// expected answer to a bad file; anything else is a bug.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "symmflow/exec/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // One memfd, rewritten per input: read_npy opens it by path like any file.
  static const int fd = memfd_create("fuzz.npy", MFD_CLOEXEC);
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (fd < 0 || ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != ssize_t(size)) std::abort();
  for (auto expect : {std::optional<symmflow::DType>(), std::optional(symmflow::DType::bf16)}) {
    try {
      symmflow::Tensor t = symmflow::exec::read_npy(path, expect);
      (void)t.to_string();
    } catch (const symmflow::Error&) {
    }
  }
  return 0;
}
