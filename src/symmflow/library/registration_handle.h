// RegistrationHandle: owns one registration (an op definition, a kernel, a
// mutation resolver, a symmetric-memory declaration) and undoes it when destroyed.
// Move-only; release() keeps the registration for the life of the process.
#pragma once
#include <functional>
#include <utility>

namespace symmflow {

class RegistrationHandle {
 public:
  RegistrationHandle() = default;
  explicit RegistrationHandle(std::function<void()> undo) : undo_(std::move(undo)) {}
  ~RegistrationHandle() { reset(); }
  RegistrationHandle(RegistrationHandle&& o) noexcept : undo_(std::exchange(o.undo_, nullptr)) {}
  RegistrationHandle& operator=(RegistrationHandle&& o) noexcept {
    if (this != &o) {
      reset();
      undo_ = std::exchange(o.undo_, nullptr);
    }
    return *this;
  }
  RegistrationHandle(const RegistrationHandle&) = delete;
  RegistrationHandle& operator=(const RegistrationHandle&) = delete;

  bool active() const { return static_cast<bool>(undo_); }
  // Undoes the registration now (no-op if already undone or released).
  void reset() {
    if (auto undo = std::exchange(undo_, nullptr)) undo();
  }
  // Keeps the registration forever; the handle becomes empty.
  void release() { undo_ = nullptr; }

 private:
  std::function<void()> undo_;
};

}  // namespace symmflow
