#include "symmflow/exec/replay_allocator.h"

#include "symmflow/core/error.h"

namespace symmflow::exec {

std::shared_ptr<Storage> ReplayAllocator::allocate(size_t nbytes) {
  if (next_ < blocks_.size()) {
    // Same program, same shapes: the same sizes in the same order.
    SF_CHECK(sizes_[next_] == nbytes,
             "compiled program: allocation {} asks for {} bytes, the recorded run made it {} bytes",
             next_, nbytes, sizes_[next_]);
    if (!blocks_[next_]) {
      ++next_;
      ++base_calls_;
      return base_.allocate(nbytes);
    }
    return blocks_[next_++];
  }
  blocks_.push_back(base_.allocate(nbytes));
  sizes_.push_back(nbytes);
  ++fresh_;
  ++base_calls_;
  ++next_;
  return blocks_.back();
}

void ReplayAllocator::release(const Storage* s) {
  for (auto& b : blocks_)
    if (b.get() == s) b.reset();
}

size_t ReplayAllocator::bytes() const {
  size_t b = 0;
  for (const auto& s : blocks_)
    if (s) b += s->nbytes();
  return b;
}

}  // namespace symmflow::exec
