#include "symmflow/runtime/symm.h"

namespace symmflow::symm {

Tensor empty(Shape sizes, DType dtype) { return empty(std::move(sizes), dtype, dist::world()); }

Tensor empty(Shape sizes, DType dtype, dist::ProcessGroup& group) {
  return Tensor::empty_with(group.heap().allocator(), std::move(sizes), dtype);
}

}  // namespace symmflow::symm
