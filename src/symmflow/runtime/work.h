// Work: the handle of one asynchronous operation (a P2P send or receive, a
// collective started with its *_async form). wait() blocks until it completed,
// driving the progress of every operation of its group meanwhile (so that rings
// and mixed P2P/collective programs cannot deadlock); is_completed() makes
// progress once and never blocks. Failures (TimeoutError, PeerFailure, argument
// mismatch between ranks) surface from wait(), with the same messages as the
// blocking forms.
//
//   auto w = dist::all_reduce_async(g, x, dist::ReduceOp::sum);
//   compute(y);                 // runs while the all_reduce is in flight
//   w.wait();                   // x holds the sum
#pragma once
#include <exception>
#include <functional>
#include <memory>

namespace symmflow::dist {

class ProcessGroup;

// One pass of progress for every operation in flight on g (collectives and P2P),
// never blocking: a compiled program calls it between instructions, so that what
// it started moves while it computes (progress inside the executor, not a thread).
void progress(ProcessGroup& g);

// What an engine (P2P, collectives) implements for one of its operations.
class WorkImpl {
 public:
  virtual ~WorkImpl() = default;
  // Progresses once (never blocks); true when the operation finished, with or
  // without an error.
  virtual bool test() = 0;
  // Progresses until finished; throws TimeoutError / PeerFailure when a wait
  // inside it fails (an error of the operation itself is left in `error`).
  virtual void block() = 0;
  std::exception_ptr error;  // set when the operation failed
};

class Work {
 public:
  Work() = default;  // an already-completed work
  explicit Work(std::shared_ptr<WorkImpl> impl) : impl_(std::move(impl)) {}
  // Blocks until done (driving progress); throws TimeoutError / PeerFailure with
  // the op, group, ranks, tag and sequence number, or the operation's own error.
  void wait();
  // Non-blocking: makes progress once, then says whether it is done.
  bool is_completed();
  // A work whose wait() runs `on_wait` (once): the tracer hands these out, so that
  // waiting on a traced op records its c10d::wait_tensor. is_completed() on it is
  // an Error (a traced program has no run-time state to poll).
  static Work deferred(std::function<void()> on_wait);

 private:
  std::shared_ptr<WorkImpl> impl_;
  std::shared_ptr<std::function<void()>> deferred_;
};

}  // namespace symmflow::dist
