// The queue of collective calls in flight (coll_queue.h), the coroutine frame
// pool (coll_task.h) and the progress functions of progress.h.
#include "symmflow/runtime/collectives/coll_queue.h"

#include <algorithm>
#include <vector>

#include "symmflow/core/error.h"

namespace symmflow::dist::detail {

// ------------------------------------------------------------ frame pool

namespace {
// Trivially destructible on purpose: a frame freed while the thread exits
// (a group destroyed late) must not touch a destroyed container.
constexpr size_t kFrameClasses = 128;  // 64-byte steps: up to 8 KiB
constexpr int kKeepPerClass = 16;
struct FreeFrame {
  FreeFrame* next;
};
thread_local FreeFrame* t_free[kFrameClasses];
thread_local int t_kept[kFrameClasses];
}  // namespace

void* frame_alloc(size_t n) {
  const size_t c = (n + 63) / 64;
  if (c < kFrameClasses && t_free[c]) {
    FreeFrame* f = t_free[c];
    t_free[c] = f->next;
    --t_kept[c];
    return f;
  }
  return ::operator new(std::max<size_t>(c, 1) * 64);
}

void frame_free(void* p, size_t n) noexcept {
  const size_t c = (n + 63) / 64;
  if (c < kFrameClasses && t_kept[c] < kKeepPerClass) {
    auto* f = static_cast<FreeFrame*>(p);
    f->next = t_free[c];
    t_free[c] = f;
    ++t_kept[c];
    return;
  }
  ::operator delete(p);
}

// ------------------------------------------------------------ the queue

namespace {

// Resumes the front call while it can take a step; a finished call leaves the
// queue and the next one starts.
void advance(CollState& st) {
  while (!st.queue.empty()) {
    std::shared_ptr<CollWork> w = st.queue.front();
    const ScopedStagingOwner owner(w->staging_owner);
    if (!w->started) {
      w->started = true;
      w->task.handle().resume();
    } else if (st.blocked.ready()) {
      st.blocked.at.resume();
    } else {
      return;
    }
    if (w->task.done()) {
      w->error = w->task.error();
      w->task = CollTask();
      w->done = true;
      st.queue.pop_front();
    }
  }
}

// Waits (spin, yield, futex, with the deadline and liveness checks of a
// signal wait) until the word the front call waits for arrived, or pending
// P2P operations of the group may progress.
void wait_blocked(ProcessGroup& g, const Blocked& b) {
  if (!p2p_pending(g)) {
    g.signals().wait_word(*b.word, b.target, b.peer, b.what, b.label, [] { return false; });
    return;
  }
  const uint64_t snap = p2p_activity(g);
  g.signals().wait_word(*b.word, b.target, b.peer, b.what, b.label,
                        [&] { return p2p_activity(g) != snap; });
}

}  // namespace

void wait_driving_p2p(ProcessGroup& g, const Blocked& b) {
  while (!b.ready()) {
    if (p2p_pending(g)) p2p_progress(g);
    if (b.ready()) return;
    wait_blocked(g, b);
  }
}

bool CollWork::test() {
  if (done) return true;
  if (p2p_pending(g_)) p2p_progress(g_);
  advance(*st_);
  return done;
}

void CollWork::block() {
  while (!done) {
    if (p2p_pending(g_)) p2p_progress(g_);
    advance(*st_);
    if (done) return;
    wait_blocked(g_, st_->blocked);
  }
}

void abandon_queue(CollState& st) {
  for (auto& w : st.queue) {
    w->task = CollTask();
    w->error = std::make_exception_ptr(Error(fmt::format(
        "{}: its process group '{}' was destroyed before the operation completed", w->name,
        st.g.name())));
    w->done = true;
  }
  st.queue.clear();
}

void CollState::run(CollTask t) {
  t.handle().resume();
  while (!t.done()) {
    wait_blocked(g, blocked);
    if (blocked.ready()) blocked.at.resume();
  }
  if (t.error()) std::rethrow_exception(t.error());
}

// ------------------------------------------------------------ progress.h

void coll_progress(ProcessGroup& g) {
  if (CollState* st = existing_coll_state(g)) advance(*st);
}

bool coll_pending(ProcessGroup& g) {
  CollState* st = existing_coll_state(g);
  return st && !st->queue.empty();
}

bool coll_ready(ProcessGroup& g) {
  CollState* st = existing_coll_state(g);
  return st && !st->queue.empty() && (!st->queue.front()->started || st->blocked.ready());
}

}  // namespace symmflow::dist::detail
