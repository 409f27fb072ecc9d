// The calls of a group in flight, in issue order. Every collective, blocking
// or not, is a CollWork in its group's queue: the front one runs (its
// coroutine resumes whenever the word it waits for arrived), the others wait
// their turn, because consecutive calls share the group's slots, counters and
// workspace and every rank runs them in the same order.
//
// Who resumes: Work::wait() / is_completed() of any call of the group, the
// start of a later call, and a P2P wait of the group (progress.h). A blocking
// collective is start + wait, with nothing else in between.
#pragma once
#include <memory>

#include "symmflow/runtime/collectives/coll_state.h"
#include "symmflow/runtime/progress.h"
#include "symmflow/runtime/sim_link.h"
#include "symmflow/runtime/work.h"

namespace symmflow::dist::detail {

class CollWork final : public WorkImpl {
 public:
  // st == nullptr: a call that completed at start (groups spanning nodes).
  CollWork(ProcessGroup& g, CollState* st) : g_(g), st_(st) {}
  bool test() override;
  void block() override;

  CollTask task;             // the algorithm, not started before it reaches the front
  CollectiveResult result;   // what it copied and which algorithm ran (set by the algorithm)
  bool started = false, done = false;
  const char* name = "collective";
  // Whose staged copies it makes (copy_stats.h): the op that started it,
  // whichever call later drives the queue.
  int64_t staging_owner = dist::staging_owner();

 private:
  friend void abandon_queue(CollState& st);
  ProcessGroup& g_;
  CollState* st_;
};

// Queues the call whose algorithm `make(work)` returns and runs it as far as it
// goes without waiting (at once when nothing is ahead of it).
template <class Make>
std::shared_ptr<CollWork> start(ProcessGroup& g, CollState& st, const char* name, Make&& make) {
  auto w = std::make_shared<CollWork>(g, &st);
  w->name = name;
  w->task = make(*w);
  st.queue.push_back(w);
  coll_progress(g);
  return w;
}

// A call of a group spanning nodes: the hierarchical algorithms are blocking
// code, so it runs to completion here and its Work is complete at once.
template <class Run>
std::shared_ptr<CollWork> run_now(ProcessGroup& g, const char* name, Run&& run) {
  auto w = std::make_shared<CollWork>(g, nullptr);
  w->name = name;
  w->result = run();
  w->done = true;
  return w;
}

// The two forms of every collective: `run()` starts the call (start / run_now
// above); `link` is its simulated link time (sim_link.h), started before it, so
// that both forms pay the same. The async form returns its Work.
template <class Run>
Work started(const LinkDelay& link, Run&& run) {
  return Work(link.wrap(run()));
}
// The blocking form: start, wait, and return what the algorithm reports.
template <class Run>
CollectiveResult finish(const LinkDelay& link, Run&& run) {
  std::shared_ptr<CollWork> w = run();
  Work(link.wrap(w)).wait();
  return w->result;
}

// Blocks until b's word arrived, driving the group's pending P2P meanwhile.
void wait_driving_p2p(ProcessGroup& g, const Blocked& b);

// The group is being destroyed with calls in flight: each ends with an Error.
void abandon_queue(CollState& st);

}  // namespace symmflow::dist::detail
