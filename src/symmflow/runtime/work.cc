#include "symmflow/runtime/work.h"

#include <utility>

#include "symmflow/core/error.h"
#include "symmflow/runtime/progress.h"

namespace symmflow::dist {

void progress(ProcessGroup& g) {
  detail::coll_progress(g);
  if (detail::p2p_ops_in_flight) detail::p2p_progress(g);
}

Work Work::deferred(std::function<void()> on_wait) {
  Work w;
  w.deferred_ = std::make_shared<std::function<void()>>(std::move(on_wait));
  return w;
}

void Work::wait() {
  if (deferred_) {
    if (*deferred_) std::exchange(*deferred_, nullptr)();
    return;
  }
  if (!impl_) return;
  impl_->block();
  if (impl_->error) std::rethrow_exception(impl_->error);
}

bool Work::is_completed() {
  SF_CHECK(!deferred_, "Work::is_completed() on a traced op: a traced program can only wait()");
  if (!impl_) return true;
  return impl_->test();
}

}  // namespace symmflow::dist
