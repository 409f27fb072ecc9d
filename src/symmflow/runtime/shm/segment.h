// ShmSegment: one POSIX shared-memory segment, created 0600 under an unguessable
// name, mapped, and unlinked as early as possible. Every segment of a job is named
// "/sf-<job id>-<kind>-<random>", so the launcher can find and unlink whatever a
// crashed rank left behind (see unlink_job_segments).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace symmflow::runtime {

// `nbytes` random bytes from getrandom(2), as lowercase hex (2*nbytes chars).
std::string random_hex(size_t nbytes);

// "sf-<16 hex>": the per-job prefix of every segment name (without the '/').
std::string new_job_id();
// The job id a segment name belongs to ("/sf-0123...-ctl-..." -> "sf-0123..."),
// or "" when the name does not follow the convention.
std::string job_id_of(const std::string& segment_name);

class ShmSegment {
 public:
  ShmSegment() = default;
  ~ShmSegment();
  ShmSegment(ShmSegment&& o) noexcept;
  ShmSegment& operator=(ShmSegment&& o) noexcept;
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;

  // Creates "/<job_id>-<kind>-<32 random hex>" with O_EXCL and mode 0600, sized
  // `nbytes` (sparse: tmpfs commits pages only when touched), and maps it.
  static ShmSegment create(const std::string& job_id, const std::string& kind, size_t nbytes);
  // Opens and maps an existing segment; its size is read with fstat.
  static ShmSegment open(const std::string& name);

  void* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& name() const { return name_; }
  // Removes the name (the mapping stays valid). Idempotent; ENOENT is fine,
  // another rank or the launcher may have unlinked it first.
  void unlink();
  bool unlinked() const { return unlinked_; }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
  std::string name_;
  bool unlinked_ = false;
};

// Without a launcher to clean up after it (mpirun), a process killed by
// SIGTERM/SIGINT/SIGHUP between creating a segment and unlinking it would leave
// it behind: this installs handlers (where the program has none) that unlink
// the segments this process created and still names, then die of the signal.
void unlink_created_segments_on_signals();

// Unlinks every /dev/shm entry whose name starts with `job_id` + "-". Returns
// how many were removed. The launcher calls it when the job ends, whatever happened.
int unlink_job_segments(const std::string& job_id);
// Names (without '/') of the /dev/shm entries of a job; tests use it for hygiene.
std::vector<std::string> list_job_segments(const std::string& job_id);

}  // namespace symmflow::runtime
