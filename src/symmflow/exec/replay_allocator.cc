#include "symmflow/exec/replay_allocator.h"

#include "symmflow/core/error.h"

namespace symmflow::exec {

std::shared_ptr<Storage> ReplayAllocator::allocate(size_t nbytes) {
  if (next_ < blocks_.size()) {
    // Same program, same shapes: the same sizes in the same order.
    SF_CHECK(blocks_[next_]->nbytes() == nbytes,
             "compiled program: allocation {} asks for {} bytes, the recorded run made it {} bytes",
             next_, nbytes, blocks_[next_]->nbytes());
    return blocks_[next_++];
  }
  blocks_.push_back(base_.allocate(nbytes));
  ++fresh_;
  ++next_;
  return blocks_.back();
}

size_t ReplayAllocator::bytes() const {
  size_t b = 0;
  for (const auto& s : blocks_) b += s->nbytes();
  return b;
}

}  // namespace symmflow::exec
