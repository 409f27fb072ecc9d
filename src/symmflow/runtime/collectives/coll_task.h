// A collective algorithm is a C++20 coroutine (CollTask) so that the same code
// runs blocking (start, then wait) and asynchronously (start, compute, wait):
// every place where an algorithm waits for a peer is a `co_await` of a
// WordAwait (a 64-bit word in shared memory reaching a value). When the word
// is not there yet the coroutine suspends and records what it waits for in
// CollState::blocked; the group's queue (coll_queue.h) resumes it when the word
// arrived, in issue order, from Work::wait(), Work::is_completed(), the next
// collective's start or a P2P wait (progress.h).
//
// Nested algorithm steps are CollTasks too: `co_await step(...)` runs the step
// with the caller as its continuation (symmetric transfer, no recursion on the
// machine stack). Exceptions travel up the chain and end in the Work.
//
// Frames come from a per-thread free list (frames of one algorithm always have
// the same size): a small all_reduce allocates nothing after its first call.
#pragma once
#include <atomic>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string_view>
#include <utility>

namespace symmflow::dist::detail {

// Recycles coroutine frames per size class (64-byte steps up to 8 KiB).
void* frame_alloc(size_t n);
void frame_free(void* p, size_t n) noexcept;

class [[nodiscard]] CollTask {
 public:
  struct promise_type;
  using Handle = std::coroutine_handle<promise_type>;

  struct FinalAwaiter {
    bool await_ready() noexcept { return false; }
    std::coroutine_handle<> await_suspend(Handle h) noexcept {
      auto c = h.promise().continuation;
      return c ? c : std::noop_coroutine();
    }
    void await_resume() noexcept {}
  };

  struct promise_type {
    std::coroutine_handle<> continuation;  // the awaiting step, or none (top level)
    std::exception_ptr error;
    CollTask get_return_object() { return CollTask(Handle::from_promise(*this)); }
    std::suspend_always initial_suspend() noexcept { return {}; }
    FinalAwaiter final_suspend() noexcept { return {}; }
    void return_void() noexcept {}
    void unhandled_exception() noexcept { error = std::current_exception(); }
    static void* operator new(size_t n) { return frame_alloc(n); }
    static void operator delete(void* p, size_t n) noexcept { frame_free(p, n); }
  };

  CollTask() = default;
  explicit CollTask(Handle h) : h_(h) {}
  CollTask(CollTask&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  CollTask& operator=(CollTask&& o) noexcept {
    if (this != &o) {
      if (h_) h_.destroy();
      h_ = std::exchange(o.h_, {});
    }
    return *this;
  }
  ~CollTask() {
    if (h_) h_.destroy();
  }

  bool valid() const { return bool(h_); }
  bool done() const { return h_.done(); }
  Handle handle() const { return h_; }
  std::exception_ptr error() const { return h_.promise().error; }

  // Awaiting a step: it starts now, the awaiting coroutine resumes when it ends.
  bool await_ready() const noexcept { return false; }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> caller) noexcept {
    h_.promise().continuation = caller;
    return h_;
  }
  void await_resume() const {
    if (h_.promise().error) std::rethrow_exception(h_.promise().error);
  }

 private:
  Handle h_;
};

// What a suspended algorithm waits for: `word` (a signal pad slot or the flag
// of a push slot, in shared memory) to reach `target`, sent by `peer`.
struct Blocked {
  std::coroutine_handle<> at;  // the innermost suspended step
  const std::atomic<uint64_t>* word = nullptr;
  uint64_t target = 0;
  int peer = -1;
  std::string_view what;   // the algorithm ("all_reduce (one-shot push)")
  std::string_view label;  // which word ("arrival", "channel 4")
  bool ready() const { return word->load(std::memory_order_acquire) >= target; }
};

// co_await WordAwait{...}: continues at once when the word is there, else
// suspends into `*blocked` (the group's one record: algorithms run one at a time).
struct WordAwait {
  Blocked* blocked;
  const std::atomic<uint64_t>* word;
  uint64_t target;
  int peer;
  std::string_view what, label;
  bool await_ready() const noexcept { return word->load(std::memory_order_acquire) >= target; }
  void await_suspend(std::coroutine_handle<> h) noexcept {
    *blocked = Blocked{h, word, target, peer, what, label};
  }
  void await_resume() const noexcept {}
};

}  // namespace symmflow::dist::detail
