// Shared-memory layout of point-to-point communication (p2p.h): one block per
// directed pair (sender s -> receiver r) in the group segment, created with the
// group (never allocated lazily from the collective heap). A block holds
//
//  - a control ring: events that s tells r, in order (each slot carries its
//    sequence number, so r polls the slot, not the head counter) (receive posts when s is
//    the receiving side of the pair's reverse direction, "put done", "ready at
//    offset, in this layout", "chunk in mailbox", "eager message in slot", "eager slot
//    consumed", "read done", "size mismatch"). Written only by s (head),
//    consumed only by r (tail); both counters only grow.
//  - eager slots: kEagerSlots x kEagerMaxBytes for small messages s -> r that s
//    sends before r has posted the receive (p2p/eager.cc); r frees a slot with
//    an `eager_consumed` event on the reverse ring.
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
#include <type_traits>

#include "symmflow/core/compact_layout.h"

namespace symmflow::runtime {

inline constexpr int kP2PRing = 256;                        // control events per pair
inline constexpr int kMailboxSlots = 2;
inline constexpr size_t kMailboxChunk = size_t(256) << 10;  // 256 KiB

// Eager protocol (p2p/eager.cc): messages up to kEagerMaxBytes go into one of
// the pair's kEagerSlots without waiting for the receive post. 4 KiB bounds
// the slot memory (16 x 4 KiB per directed pair); measured side by side
// (`symmflow bench collectives --nproc 2 --sizes 1K-16K --ops p2p`, columns
// `symmflow` = eager on, `rendezvous` = eager off), a symmetric ping-pong is
// not faster eager (1 KiB: 0.49-0.53 vs 0.43-0.45 us one-way on a loaded
// 2-vCPU VM), because there the receive post travels while the data does;
// eager pays off where the receive is posted after the send (see eager.cc).
inline constexpr size_t kEagerMaxBytes = size_t(4) << 10;  // 4 KiB
inline constexpr int kEagerSlots = 16;                     // per directed pair

enum class P2PEventType : uint32_t {
  recv_posted = 1,  // receiver -> sender: a receive is posted (RecvPosted)
  put_done,         // sender -> receiver: the data is in the receive buffer
  send_ready,       // sender -> receiver: read it from my symmetric buffer (SendReady)
  mailbox_chunk,    // sender -> receiver: a chunk is in the mailbox (MailboxChunk)
  read_done,        // receiver -> sender: done reading the send buffer (answers send_ready)
  size_mismatch,    // sender -> receiver: the sizes differ (SizeMismatch)
  eager_message,    // sender -> receiver: a whole message is in an eager slot (EagerMessage)
  eager_consumed,   // receiver -> sender: the eager slot is free again (EagerConsumed)
};

// Every event names its message by (tag, tag_seq): the k-th send of s to r with
// tag t is the k-th receive of r from s with tag t.
struct P2PEvent {
  // A symmetric buffer is named by the heap offset of its element 0 and its
  // layout (one run, or a strided view such as a column: core/compact_layout.h),
  // so the peer can write or read it in place.
  struct RecvPosted {
    uint64_t nbytes;
    int64_t heap_offset;   // of the receive buffer in r's heap; -1: not symmetric or no compact layout
    CompactLayout layout;  // of the receive buffer (when heap_offset >= 0)
  };
  struct SendReady {
    uint64_t heap_offset;  // of the symmetric send buffer in s's heap
    CompactLayout layout;  // of the send buffer
  };
  struct MailboxChunk {
    uint64_t message_offset;  // byte offset of the chunk in the message
    uint64_t length;          // bytes
    uint64_t slot;            // mailbox slot
  };
  struct SizeMismatch {
    uint64_t sender_nbytes;
  };
  struct EagerMessage {
    uint64_t nbytes;
    uint64_t slot;  // eager slot
  };
  struct EagerConsumed {
    uint64_t slot;
    uint64_t receiver_nbytes;  // differs from the sent size: a size mismatch
  };

  P2PEventType type;
  int32_t tag;
  uint64_t tag_seq;
  union {
    RecvPosted recv_posted;
    SendReady send_ready;
    MailboxChunk mailbox_chunk;
    SizeMismatch size_mismatch;
    EagerMessage eager_message;
    EagerConsumed eager_consumed;
    uint64_t raw_[5];
  };
  // The event's index in the ring's history + 1, stored last (release) when
  // the event is written: the receiver polls the slot itself (one cache line
  // per event) and reads `head` only to sleep on it (p2p/shm_channel.cc).
  uint64_t seq;
};
static_assert(sizeof(P2PEvent) == 64);
static_assert(std::is_trivially_copyable_v<P2PEvent>);
static_assert(offsetof(P2PEvent, seq) == 56);

struct alignas(4096) P2PPairBlock {
  alignas(64) std::atomic<uint64_t> head;     // events published by the sender side
  alignas(64) std::atomic<uint64_t> tail;     // events consumed by the receiver side
  alignas(64) std::atomic<uint64_t> drained;  // mailbox chunks copied out by the receiver
  alignas(64) P2PEvent ring[kP2PRing];
  alignas(4096) char eager[kEagerSlots][kEagerMaxBytes];
  alignas(4096) char mailbox[kMailboxSlots][kMailboxChunk];
};

}  // namespace symmflow::runtime
