// Helpers for the runtime's multi-process tests: run a body in N ranks through
// launch_fn with the output captured, and check /dev/shm hygiene afterwards.
// Rank bodies assert with SF_CHECK (a throw fails that rank, hence the job):
// GoogleTest assertions inside a forked rank would not reach the parent.
#pragma once
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <string>

#include "symmflow/runtime/launcher.h"
#include "symmflow/runtime/process_group_internal.h"
#include "symmflow/runtime/shm/segment.h"

namespace symmflow::runtime::testing {

struct JobResult {
  int rc = -1;
  std::string out, err;
  LaunchReport report;
  double seconds = 0;
};

inline std::string read_memfd(int fd) {
  std::string s;
  lseek(fd, 0, SEEK_SET);
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) s.append(buf, size_t(n));
  close(fd);
  return s;
}

inline JobResult run_job(int nproc, const std::function<int()>& body,
                         std::function<void(LaunchOptions&)> tweak = nullptr) {
  LaunchOptions o;
  o.nproc = nproc;
  o.grace_s = 2;
  o.out_fd = memfd_create("sf-test-out", 0);
  o.err_fd = memfd_create("sf-test-err", 0);
  // Tests run the heap in checked mode, with a small heap and a short deadline.
  o.env = {{"SYMMFLOW_CHECK_HEAP", "1"}, {"SYMMFLOW_SYMM_HEAP_BYTES", "64M"},
           {"SYMMFLOW_TIMEOUT", "30"}};
  if (tweak) tweak(o);
  JobResult r;
  auto t0 = std::chrono::steady_clock::now();
  r.rc = launch_fn(o, body, &r.report);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.out = read_memfd(o.out_fd);
  r.err = read_memfd(o.err_fd);
  return r;
}

// Nothing of the job may be left in /dev/shm, and the launcher should not have
// had to remove anything a clean job unlinks itself.
inline void expect_clean(const JobResult& r) {
  EXPECT_FALSE(r.report.job_id.empty());
  EXPECT_TRUE(list_job_segments(r.report.job_id).empty()) << "leftover segments of " << r.report.job_id;
}

#define SF_EXPECT_JOB_OK(r)                                                   \
  do {                                                                        \
    EXPECT_EQ((r).rc, 0) << "stdout:\n" << (r).out << "stderr:\n" << (r).err; \
    ::symmflow::runtime::testing::expect_clean(r);                            \
  } while (0)

}  // namespace symmflow::runtime::testing
