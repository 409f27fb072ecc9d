#include "symmflow/ops/work_registry.h"

#include <mutex>
#include <vector>

namespace symmflow::ops {
namespace {

struct Entry {
  const TensorImpl* impl;
  const Storage* storage;
  Tensor keep;  // the tensor stays alive while its work is pending
  dist::Work work;
};

std::mutex g_mu;
std::vector<Entry> g_pending;

}  // namespace

void register_work(const Tensor& t, dist::Work work) {
  std::lock_guard lock(g_mu);
  g_pending.push_back({t.unsafe_impl(), t.storage().get(), t, std::move(work)});
}

int wait_registered(const Tensor& t) {
  std::vector<Entry> mine;
  {
    std::lock_guard lock(g_mu);
    auto take = [&](auto pred) {
      for (auto it = g_pending.begin(); it != g_pending.end();) {
        if (pred(*it)) {
          mine.push_back(std::move(*it));
          it = g_pending.erase(it);
        } else {
          ++it;
        }
      }
    };
    take([&](const Entry& e) { return e.impl == t.unsafe_impl(); });
    if (mine.empty() && t.storage())
      take([&](const Entry& e) { return e.storage == t.storage().get(); });
  }
  // Wait outside the lock: waiting drives progress, which may take a while.
  for (auto& e : mine) e.work.wait();
  return int(mine.size());
}

size_t pending_work_count() {
  std::lock_guard lock(g_mu);
  return g_pending.size();
}

}  // namespace symmflow::ops
