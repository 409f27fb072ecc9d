// Symmetric tensors: allocated in a group's symmetric heap, at the same offset
// on every rank, so a peer's copy is reachable with storage()->peer_ptr(peer).
//
//   auto x = symm::empty({1024}, DType::f32);    // collective over world()
//   {
//     symm::Scope scope;                         // every Tensor::empty inside is
//     auto y = Tensor::empty({16});              // symmetric (collective too:
//   }                                            // all ranks allocate the same)
#pragma once
#include "symmflow/core/tensor.h"
#include "symmflow/runtime/process_group.h"
#include "symmflow/runtime/world.h"

namespace symmflow::symm {

Tensor empty(Shape sizes, DType dtype = DType::f32);
Tensor empty(Shape sizes, DType dtype, dist::ProcessGroup& group);

// Makes the group's symmetric allocator the thread's allocator for its lifetime.
class Scope {
 public:
  Scope() : Scope(dist::world()) {}
  explicit Scope(dist::ProcessGroup& group) : guard_(group.heap().allocator()) {}

 private:
  AllocatorGuard guard_;
};

}  // namespace symmflow::symm
