// Shared-memory layout of point-to-point communication (p2p.h): one block per
// directed pair (sender s -> receiver r) in the group segment, created with the
// group (never allocated lazily from the collective heap). A block holds
//
//  - a control ring: events that s tells r, in order (receive posts when s is
//    the receiving side of the pair's reverse direction, "put done", "ready at
//    offset", "chunk in mailbox", "read done", "size mismatch"). Written only by
//    s (head), consumed only by r (tail); both counters only grow.
//  - a mailbox of kMailboxSlots x kMailboxChunk bytes for staged transfers
//    s -> r; `drained` counts the chunks r has copied out (only grows).
//
// Every update of head / tail / drained is followed by runtime::notify() on the
// other side's wake word (the one SignalPad signals use), so a waiter sleeping
// in wait_slow is woken by any P2P event addressed to it.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace symmflow::runtime {

inline constexpr int kP2PRing = 256;                      // control events per pair
inline constexpr int kMailboxSlots = 2;
inline constexpr size_t kMailboxChunk = size_t(256) << 10;  // 256 KiB

struct P2PEvent {
  uint32_t type;      // P2PEventType
  int32_t tag;
  uint64_t post;      // receive-post index of the pair (names the message)
  uint64_t a, b, c;   // type-specific
  uint64_t pad_[3];
};
static_assert(sizeof(P2PEvent) == 64);

struct alignas(4096) P2PPairBlock {
  alignas(64) std::atomic<uint64_t> head;     // events published by the sender side
  alignas(64) std::atomic<uint64_t> tail;     // events consumed by the receiver side
  alignas(64) std::atomic<uint64_t> drained;  // mailbox chunks copied out by the receiver
  alignas(64) P2PEvent ring[kP2PRing];
  alignas(4096) char mailbox[kMailboxSlots][kMailboxChunk];
};

}  // namespace symmflow::runtime
