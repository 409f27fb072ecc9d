#include "symmflow/runtime/shm/segment.h"

#include <dirent.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "symmflow/core/error.h"

namespace symmflow::runtime {

namespace {

// Segments this process created and has not unlinked yet, as /dev/shm paths,
// for a signal handler: fixed storage, no allocation, no locks.
constexpr int kPendingSlots = 32;
struct PendingSlot {
  std::atomic<bool> used{false};
  char path[160];
};
PendingSlot g_pending[kPendingSlots];

void add_pending(const std::string& name) {
  std::string path = "/dev/shm" + name;
  if (path.size() >= sizeof(PendingSlot::path)) return;
  for (auto& p : g_pending) {
    if (p.used.load()) continue;
    std::memcpy(p.path, path.c_str(), path.size() + 1);
    p.used.store(true);
    return;
  }
}

void remove_pending(const std::string& name) {
  std::string path = "/dev/shm" + name;
  for (auto& p : g_pending)
    if (p.used.load() && path == p.path) p.used.store(false);
}

void unlink_pending_and_reraise(int sig) {
  for (auto& p : g_pending)
    if (p.used.load()) ::unlink(p.path);  // async-signal-safe
  signal(sig, SIG_DFL);
  raise(sig);
}

}  // namespace

void unlink_created_segments_on_signals() {
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
    struct sigaction old {};
    if (sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) continue;  // the app's own
    struct sigaction sa {};
    sa.sa_handler = unlink_pending_and_reraise;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, nullptr);
  }
}

std::string random_hex(size_t nbytes) {
  std::string raw(nbytes, '\0');
  size_t got = 0;
  while (got < nbytes) {
    ssize_t n = getrandom(raw.data() + got, nbytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    SF_CHECK(n > 0, "getrandom failed: {}", std::strerror(errno));
    got += size_t(n);
  }
  static const char* digits = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * nbytes);
  for (unsigned char c : raw) {
    hex.push_back(digits[c >> 4]);
    hex.push_back(digits[c & 15]);
  }
  return hex;
}

std::string new_job_id() { return "sf-" + random_hex(8); }

std::string job_id_of(const std::string& name) {
  size_t start = (!name.empty() && name[0] == '/') ? 1 : 0;
  if (name.compare(start, 3, "sf-") != 0) return "";
  size_t dash = name.find('-', start + 3);
  if (dash == std::string::npos || dash != start + 3 + 16) return "";
  return name.substr(start, dash - start);
}

ShmSegment::~ShmSegment() {
  if (data_ && data_ != MAP_FAILED) munmap(data_, size_);
}

ShmSegment::ShmSegment(ShmSegment&& o) noexcept { *this = std::move(o); }

ShmSegment& ShmSegment::operator=(ShmSegment&& o) noexcept {
  if (this != &o) {
    if (data_) munmap(data_, size_);
    data_ = o.data_;
    size_ = o.size_;
    name_ = std::move(o.name_);
    unlinked_ = o.unlinked_;
    o.data_ = nullptr;
    o.size_ = 0;
  }
  return *this;
}

static void* map_fd(int fd, size_t nbytes, const std::string& name) {
  void* p = mmap(nullptr, nbytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int err = errno;
  close(fd);
  SF_CHECK(p != MAP_FAILED, "mmap of shared-memory segment {} ({} bytes) failed: {}", name, nbytes,
           std::strerror(err));
  return p;
}

ShmSegment ShmSegment::create(const std::string& job_id, const std::string& kind, size_t nbytes) {
  ShmSegment s;
  s.name_ = "/" + job_id + "-" + kind + "-" + random_hex(16);
  int fd = shm_open(s.name_.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  SF_CHECK(fd >= 0, "shm_open(create) of {} failed: {}", s.name_, std::strerror(errno));
  // fchmod because the umask could have removed bits we do not want anyway,
  // and to be explicit: only this user may open the segment.
  fchmod(fd, 0600);
  if (ftruncate(fd, off_t(nbytes)) != 0) {
    int err = errno;
    close(fd);
    shm_unlink(s.name_.c_str());
    fail("ftruncate of shared-memory segment {} to {} bytes failed: {}", s.name_, nbytes,
         std::strerror(err));
  }
  try {
    s.data_ = map_fd(fd, nbytes, s.name_);
  } catch (...) {
    shm_unlink(s.name_.c_str());
    throw;
  }
  s.size_ = nbytes;
  add_pending(s.name_);
  return s;
}

ShmSegment ShmSegment::open(const std::string& name) {
  ShmSegment s;
  s.name_ = name;
  int fd = shm_open(name.c_str(), O_RDWR, 0);
  SF_CHECK(fd >= 0, "cannot open shared-memory segment {}: {} (was the job already torn down, or "
           "is the rendezvous handle from another job?)", name, std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    int err = errno;
    close(fd);
    fail("fstat of shared-memory segment {} failed: {}", name, std::strerror(err));
  }
  s.size_ = size_t(st.st_size);
  s.data_ = map_fd(fd, s.size_, name);
  return s;
}

void ShmSegment::unlink() {
  if (unlinked_ || name_.empty()) return;
  shm_unlink(name_.c_str());
  remove_pending(name_);
  unlinked_ = true;
}

std::vector<std::string> list_job_segments(const std::string& job_id) {
  std::vector<std::string> out;
  if (job_id.empty()) return out;
  DIR* d = opendir("/dev/shm");
  if (!d) return out;
  std::string prefix = job_id + "-";
  while (dirent* e = readdir(d)) {
    if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0) out.emplace_back(e->d_name);
  }
  closedir(d);
  return out;
}

int unlink_job_segments(const std::string& job_id) {
  int n = 0;
  for (const auto& name : list_job_segments(job_id)) {
    if (shm_unlink(("/" + name).c_str()) == 0) ++n;
  }
  return n;
}

}  // namespace symmflow::runtime
