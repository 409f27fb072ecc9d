// OpContext: what a kernel gets besides its arguments — the dispatch key being run
// and services that higher layers attach (the runtime's World, the executor's
// arena, a trace recorder). The library layer knows none of those types: services
// are stored by type, so `ctx.get<World>()` works without library/ depending on
// runtime/. A service is borrowed; its owner keeps it alive while the context is used.
//
//   OpContext ctx(DispatchKey::CPU);
//   ctx.set<World>(&world);
//   World* w = ctx.get<World>();   // nullptr when not attached
#pragma once
#include <typeindex>
#include <unordered_map>

#include "symmflow/library/dispatch_key.h"

namespace symmflow {

class OpContext {
 public:
  explicit OpContext(DispatchKey key = DispatchKey::CPU) : key_(key) {}

  DispatchKey key() const { return key_; }
  void set_key(DispatchKey key) { key_ = key; }

  template <class T>
  T* get() const {
    auto it = services_.find(std::type_index(typeid(T)));
    return it == services_.end() ? nullptr : static_cast<T*>(it->second);
  }
  // Attaches `service` (nullptr detaches it).
  template <class T>
  void set(T* service) {
    if (service == nullptr)
      services_.erase(std::type_index(typeid(T)));
    else
      services_[std::type_index(typeid(T))] = service;
  }

 private:
  DispatchKey key_;
  std::unordered_map<std::type_index, void*> services_;
};

}  // namespace symmflow
