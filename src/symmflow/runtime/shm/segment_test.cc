// Segment hygiene without a launcher: a process killed by SIGTERM between
// creating a segment and unlinking it leaves nothing behind once
// unlink_created_segments_on_signals() is installed (the mpi backend does).
#include "symmflow/runtime/shm/segment.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace symmflow::runtime {
namespace {

// Forks a child that creates a segment of job `job`, says so, and waits to be killed.
int run_child_and_terminate(const std::string& job, bool handlers) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    if (handlers) unlink_created_segments_on_signals();
    ShmSegment s = ShmSegment::create(job, "grp", 4096);
    char c = 1;
    if (write(fds[1], &c, 1) != 1) _exit(3);
    for (;;) pause();
  }
  close(fds[1]);
  char c = 0;
  EXPECT_EQ(read(fds[0], &c, 1), 1);
  close(fds[0]);
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

TEST(ShmSegment, SigtermUnlinksWhatTheProcessCreated) {
  const std::string job = new_job_id();
  int status = run_child_and_terminate(job, true);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);  // still dies of the signal
  EXPECT_TRUE(list_job_segments(job).empty());
}

TEST(ShmSegment, WithoutTheHandlersTheSegmentWouldStay) {
  // The control: shows the test above would fail without the handlers.
  const std::string job = new_job_id();
  run_child_and_terminate(job, false);
  EXPECT_EQ(list_job_segments(job).size(), 1u);
  EXPECT_EQ(unlink_job_segments(job), 1);
}

}  // namespace
}  // namespace symmflow::runtime
