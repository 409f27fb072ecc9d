#include "symmflow/runtime/launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <new>

#include "symmflow/core/error.h"
#include "symmflow/runtime/shm/control_block.h"
#include "symmflow/runtime/shm/segment.h"
#include "symmflow/runtime/world.h"

extern char** environ;

namespace symmflow::runtime {

int status_code(int st) {
  if (WIFEXITED(st)) return WEXITSTATUS(st);
  if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
  return 1;
}

namespace {

using Clock = std::chrono::steady_clock;

void write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;  // the reader went away: drop output rather than die
    p += w;
    n -= size_t(w);
  }
}

// One rank's output stream: splits into lines and prefixes each one.
struct OutStream {
  int fd = -1;      // read end of the pipe, -1 once closed
  int dest = 1;
  int rank = 0;
  bool prefix = true;
  std::string pending;

  void emit(std::string_view line) {
    std::string out = prefix ? fmt::format("[rank {}] ", rank) : std::string();
    out.append(line);
    out.push_back('\n');
    write_all(dest, out.data(), out.size());
  }
  // Returns false at EOF.
  bool pump() {
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
    if (n <= 0) {
      if (!pending.empty()) emit(pending);  // a last line without '\n'
      pending.clear();
      close(fd);
      fd = -1;
      return false;
    }
    pending.append(buf, size_t(n));
    size_t start = 0;
    for (size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
      emit(std::string_view(pending).substr(start, nl - start));
    }
    pending.erase(0, start);
    return true;
  }
};

struct Job {
  std::string job_id;
  std::string token;
  ShmSegment ctl;
  ControlBlock* cb = nullptr;
};

Job create_job(int nproc) {
  SF_CHECK(nproc >= 1 && nproc <= kMaxRanks, "launch: expected 1 <= nproc <= {}, found {}",
           kMaxRanks, nproc);
  Job j;
  j.job_id = new_job_id();
  j.token = random_hex(16);
  j.ctl = ShmSegment::create(j.job_id, "ctl", sizeof(ControlBlock));
  // The segment is zero-filled by ftruncate: every atomic starts at 0.
  j.cb = new (j.ctl.data()) ControlBlock();
  j.cb->magic = kControlMagic;
  j.cb->version = kControlVersion;
  j.cb->world_size = nproc;
  std::snprintf(j.cb->job_id, sizeof j.cb->job_id, "%s", j.job_id.c_str());
  std::snprintf(j.cb->token, sizeof j.cb->token, "%s", j.token.c_str());
  for (int r = 0; r < nproc; ++r) j.cb->pid[r].store(0);
  return j;
}

std::vector<std::pair<std::string, std::string>> rank_env(const Job& j, const LaunchOptions& o,
                                                          int r) {
  std::vector<std::pair<std::string, std::string>> env = {
      {"SYMMFLOW_RANK", std::to_string(r)},
      {"SYMMFLOW_WORLD_SIZE", std::to_string(o.nproc)},
      {"SYMMFLOW_LOCAL_RANK", std::to_string(r)},
      {"SYMMFLOW_LOCAL_WORLD_SIZE", std::to_string(o.nproc)},
      {"SYMMFLOW_RENDEZVOUS", j.ctl.name()},
      {"SYMMFLOW_JOB_TOKEN", j.token},
  };
  for (const auto& kv : o.env) env.push_back(kv);
  return env;
}

// Runs in the child between fork and exec/body: output pipes, env, pinning.
void setup_child(const Job& j, const LaunchOptions& o, int r, int out_w, int err_w,
                 const std::vector<int>& close_fds) {
  for (int fd : close_fds) close(fd);
  if (out_w >= 0) dup2(out_w, 1), close(out_w);
  else if (o.out_fd != 1) dup2(o.out_fd, 1);
  if (err_w >= 0) dup2(err_w, 2), close(err_w);
  else if (o.err_fd != 2) dup2(o.err_fd, 2);
  for (const auto& [k, v] : rank_env(j, o, r)) setenv(k.c_str(), v.c_str(), 1);
  // Die with the launcher: no orphaned rank keeps spinning if it is killed.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (o.pin) {
    // The r-th CPU this launcher may use (a container's cpuset need not start at 0).
    cpu_set_t allowed, one;
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0 && o.nproc <= CPU_COUNT(&allowed)) {
      for (int cpu = 0, seen = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (!CPU_ISSET(cpu, &allowed) || seen++ != r) continue;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        sched_setaffinity(0, sizeof one, &one);
        break;
      }
    }
  }
}

int supervise(Job& j, const LaunchOptions& o, std::vector<pid_t>& pids,
              std::vector<OutStream>& streams, LaunchReport* report) {
  const int n = o.nproc;
  std::vector<int> status(n, -1);
  int running = n, first_failed = -1, rc = 0;
  auto start = Clock::now();
  bool killing_scheduled = false, killed = false, timed_out = false;
  Clock::time_point kill_at{}, drain_until{};

  bool rank_raised_abort = false;  // a rank reported its own failure first
  auto start_grace = [&](const std::string& reason, int rank) {
    if (!abort_job(j.cb, rank, reason) && !timed_out) rank_raised_abort = true;
    if (!killing_scheduled) {
      killing_scheduled = true;
      kill_at = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(o.grace_s));
    }
  };

  auto open_streams = [&] {
    int k = 0;
    for (auto& s : streams) k += s.fd >= 0;
    return k;
  };

  while (running > 0 || open_streams() > 0) {
    std::vector<pollfd> fds;
    std::vector<OutStream*> owners;
    for (auto& s : streams) {
      if (s.fd >= 0) {
        fds.push_back({s.fd, POLLIN, 0});
        owners.push_back(&s);
      }
    }
    // After every rank exited, a grandchild could still hold a pipe: give the
    // streams a short time to drain, then stop listening.
    int poll_ms = running > 0 ? 10 : 200;
    if (running == 0 && drain_until == Clock::time_point{})
      drain_until = Clock::now() + std::chrono::seconds(1);
    if (running == 0 && Clock::now() > drain_until) {
      for (auto& s : streams) {
        if (s.fd >= 0) close(s.fd), s.fd = -1;
      }
      break;
    }
    int ready = fds.empty() ? (usleep(poll_ms * 1000), 0) : poll(fds.data(), fds.size(), poll_ms);
    if (ready > 0) {
      for (size_t i = 0; i < fds.size(); ++i) {
        if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) owners[i]->pump();
      }
    } else if (ready == 0 && running == 0) {
      for (auto& s : streams) {
        if (s.fd >= 0) s.pump(), close(s.fd), s.fd = -1;
      }
    }

    for (int r = 0; r < n; ++r) {
      if (status[r] >= 0) continue;
      int st = 0;
      pid_t w = waitpid(pids[r], &st, WNOHANG);
      if (w != pids[r]) continue;
      status[r] = status_code(st);
      --running;
      // After a job timeout, ranks failing with PeerFailure are consequences.
      if (status[r] != 0 && first_failed < 0 && !killed && !timed_out) {
        first_failed = r;
        rc = status[r];
        std::string how = WIFSIGNALED(st)
                              ? fmt::format("killed by signal {} ({})", WTERMSIG(st),
                                            strsignal(WTERMSIG(st)))
                              : fmt::format("exited with code {}", status[r]);
        start_grace(fmt::format("rank {} (pid {}) {}", r, pids[r], how), r);
      }
    }

    auto now = Clock::now();
    if (o.timeout_s > 0 && running > 0 && !killing_scheduled &&
        now - start > std::chrono::duration<double>(o.timeout_s)) {
      rc = 124;
      timed_out = true;
      start_grace(fmt::format("job timeout: ranks still running after {} s", o.timeout_s), -1);
    }
    if (killing_scheduled && !killed && running > 0 && now >= kill_at) {
      killed = true;
      for (int r = 0; r < n; ++r) {
        if (status[r] < 0) kill(pids[r], SIGKILL);
      }
    }
  }

  // A rank that failed with an exception raised the abort itself, naming
  // itself, before it exited; peers it brought down may have exited earlier.
  if (rank_raised_abort && j.cb->abort_rank >= 0 && j.cb->abort_rank < n &&
      status[j.cb->abort_rank] > 0) {
    first_failed = j.cb->abort_rank;
    rc = status[first_failed];
  }
  // What the ranks reported (dist::report_failure), each message once.
  std::string failures = failure_summary(j.cb);
  for (size_t at = 0, nl; at < failures.size(); at = nl + 1) {
    nl = failures.find('\n', at);
    const std::string line = "symmflow: " + failures.substr(at, nl - at + 1);
    write_all(o.err_fd, line.data(), line.size());
  }
  if (report) {
    report->status = status;
    report->first_failed_rank = first_failed;
    report->abort_reason = abort_message(j.cb);
  }
  return rc;
}

int run_job(const LaunchOptions& o, LaunchReport* report,
            const std::function<void(int rank)>& in_child) {
  Job j = create_job(o.nproc);
  if (report) report->job_id = j.job_id;
  std::vector<pid_t> pids;
  std::vector<OutStream> streams;
  std::vector<int> parent_fds;  // read ends the children must not keep
  int rc = 0;
  try {
    for (int r = 0; r < o.nproc; ++r) {
      int out_p[2] = {-1, -1}, err_p[2] = {-1, -1};
      if (o.prefix_output) {
        SF_CHECK(pipe2(out_p, O_CLOEXEC) == 0 && pipe2(err_p, O_CLOEXEC) == 0,
                 "launch: pipe failed: {}", std::strerror(errno));
      }
      std::fflush(nullptr);  // nothing buffered gets printed twice by the child
      pid_t pid = fork();
      SF_CHECK(pid >= 0, "launch: fork of rank {} failed: {}", r, std::strerror(errno));
      if (pid == 0) {
        setup_child(j, o, r, out_p[1], err_p[1], parent_fds);
        if (out_p[0] >= 0) close(out_p[0]), close(err_p[0]);
        in_child(r);  // never returns
        _exit(127);
      }
      pids.push_back(pid);
      if (o.prefix_output) {
        close(out_p[1]);
        close(err_p[1]);
        streams.push_back({out_p[0], o.out_fd, r, true, {}});
        streams.push_back({err_p[0], o.err_fd, r, true, {}});
        parent_fds.push_back(out_p[0]);
        parent_fds.push_back(err_p[0]);
      }
    }
    rc = supervise(j, o, pids, streams, report);
  } catch (...) {
    for (pid_t p : pids) kill(p, SIGKILL);
    for (pid_t p : pids) waitpid(p, nullptr, 0);
    unlink_job_segments(j.job_id);
    throw;
  }
  // Hygiene: whatever the ranks did or did not unlink, nothing of the job stays.
  int removed = unlink_job_segments(j.job_id);
  if (report) report->segments_unlinked = removed;
  return rc;
}

}  // namespace

int launch(const LaunchOptions& o, LaunchReport* report) {
  SF_CHECK(!o.argv.empty(), "launch: expected a command to run, found an empty argv");
  return run_job(o, report, [&](int r) {
    std::vector<char*> args;
    for (const auto& a : o.argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    std::fprintf(stderr, "symmflow launch: cannot execute '%s' for rank %d: %s\n", args[0], r,
                 std::strerror(errno));
    _exit(127);
  });
}

int launch_fn(const LaunchOptions& o, const std::function<int()>& body, LaunchReport* report) {
  return run_job(o, report, [&](int r) {
    int rc = 1;
    std::string failure;
    bool consequence = false;  // failed because a peer did: do not claim the abort
    // The launcher prints what the ranks report, once per distinct message.
    auto tell = [r](const char* what) {
      if (!dist::report_failure(what)) std::fprintf(stderr, "symmflow: rank %d: %s\n", r, what);
    };
    try {
      rc = body();
    } catch (const PeerFailure& e) {
      tell(e.what());
      consequence = true;
      rc = 1;
    } catch (const std::exception& e) {
      tell(e.what());
      failure = e.what();
      rc = 1;
    } catch (...) {
      tell("unknown exception");
      rc = 1;
    }
    try {
      // Tell the peers now (they fail fast, naming this rank), not when the
      // launcher notices the exit.
      if (rc != 0 && !consequence && dist::is_initialized())
        dist::backend().abort(fmt::format("rank {} failed: {}", r, failure.empty()
                                              ? fmt::format("exit code {}", rc) : failure));
      if (dist::is_initialized()) dist::shutdown();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "symmflow: rank %d: during shutdown: %s\n", r, e.what());
      if (rc == 0) rc = 1;
    }
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    // _exit: the forked copy of the parent (a test runner) must not run its
    // atexit handlers and static destructors a second time.
    _exit(rc);
  });
}

int launch_fn(int nproc, const std::function<int()>& body, LaunchReport* report) {
  LaunchOptions o;
  o.nproc = nproc;
  return launch_fn(o, body, report);
}

}  // namespace symmflow::runtime
