// P2PEngine: the per-group state of point-to-point communication (p2p.h) and
// the declarations of its parts; each part is defined in a file of its own:
//
//   engine.cc        construction, one progress pass, the wait loop, activity
//   matching.cc      sequence numbers, receive posts, matching a send to a post
//   shm_channel.cc   the per-pair control rings (channel.h), event dispatch,
//                    the one-sided put and the read-from-sender paths
//   eager.cc         small messages sent before the receive is posted
//   mailbox.cc       staged transfers through the pair's mailbox
//   net_path.cc      peers on another node (NetLink)
//   diagnostics.cc   what a pending operation waits for (timeout messages)
//   api.cc           isend / irecv / batch_isend_irecv, Work, progress.h
//
// Protocol, for a message from s to r (both in shared memory): the k-th send of
// s to r with tag t is the k-th receive of r from s with tag t (MessageKey
// {t, k}: both sides count). r posts each receive on the r -> s ring
// (recv_posted: size; heap offset and compact layout when symmetric). s then
//  - rendezvous (s has r's post when it sends): puts the data straight into
//    r's symmetric buffer (put_done), or lets r read it from its own symmetric
//    buffer (send_ready / read_done) — either end may be strided (a column:
//    copy_elements walks both layouts) — or stages it through the mailbox
//    (mailbox_chunk), or reports a size mismatch;
//  - eager (no post yet, at most kEagerMaxBytes, a free eager slot): copies the
//    message into a slot (eager_message), which completes s's send at once (as
//    MPI's eager sends do); r matches it with the receive of the same key,
//    copies it out and frees the slot (eager_consumed). A size mismatch is
//    reported by r only. A post that crosses an eager message on the way is
//    dropped by s (the slot is still in use when it arrives: r frees it only
//    after its post, on the same ring).
//
// Progress is single-threaded and explicit: progress() consumes all incoming
// control events, polls the network, flushes queued events and drives staged
// sends. Nothing blocks except wait(), which polls a few passes, then sleeps in
// wait_slow() on this rank's wake word until any counter it depends on moves
// (activity()).
//
// Per operation nothing is allocated in the steady state: the Work comes from a
// per-thread pool (allocate_shared), a contiguous tensor needs no layout (a
// strided one is core's StridedLayout), the per-peer queues are vectors that
// keep their capacity, the engine of a group is cached per thread, and a Work
// names its engine by pointer + id (no weak_ptr count per operation). A pass
// notifies each peer it published to once, at its end (one seq_cst fence per
// peer and pass, not one per event).
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <atomic>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "symmflow/core/compact_layout.h"
#include "symmflow/core/strided.h"
#include "symmflow/runtime/copy_stats.h"
#include "symmflow/runtime/p2p/channel.h"
#include "symmflow/runtime/p2p/p2p.h"
#include "symmflow/runtime/process_group_internal.h"

namespace symmflow::dist {

class P2PEngine;

// Names one message of a directed pair: its tag and its number within the tag.
struct MessageKey {
  int32_t tag = 0;
  uint64_t tag_seq = 0;  // from 1
  bool operator==(const MessageKey&) const = default;
};

// Per-tag message counters of one peer. Tags are few and the last one is most
// likely the next: remembered (unordered_map keeps references on rehash).
struct TagCounters {
  std::unordered_map<int, uint64_t> by_tag;
  int last_tag = 0;
  uint64_t* last = nullptr;
  uint64_t next(int tag) {
    if (!last || last_tag != tag) {
      last = &by_tag[tag];
      last_tag = tag;
    }
    return ++*last;
  }
};

class P2PWork final : public WorkImpl {
 public:
  bool test() override;
  void block() override;
  enum class State {
    queued,   // send: waiting for the receive post; receive: waiting for data
    reading,  // send: the receiver reads my symmetric buffer
    staged,   // mailbox transfer in progress
    net,      // on the NetLink (peer on another node)
    done,
  };
  P2POp::Kind kind;
  // The engine, checked alive before use (P2PEngine::alive): no reference
  // count is touched per operation.
  P2PEngine* engine = nullptr;
  uint64_t engine_id = 0;
  uint64_t engine_generation = 0;  // P2PEngine::generation when made
  int peer = 0, tag = 0;
  uint64_t tag_seq = 0;  // per (peer, tag), from 1
  Tensor tensor;
  char* data = nullptr;    // element 0 (null when empty)
  size_t itemsize = 1;
  bool contiguous = true;  // one run: copies are one memcpy, `layout` is unused
  StridedLayout layout;    // strided tensors only (a contiguous one allocates nothing)
  size_t nbytes = 0;
  // Of element 0 in the group's heap when symmetric and its layout is compact
  // (core/compact_layout.h: one run, a column, a face); -1 otherwise.
  int64_t heap_offset = -1;
  CompactLayout wire{};          // the layout the peer walks (when heap_offset >= 0)
  bool rendezvous = false;       // a send that never goes eager (P2POp::rendezvous)
  // Whose staged copies it makes (copy_stats.h): the op that posted it, even
  // when another op's wait moves its bytes.
  int64_t staging_owner = dist::staging_owner();
  size_t bytes_transferred = 0;  // staged transfers
  State state = State::queued;
  NetLink::Request net_request = -1;  // peer on another node
  std::vector<char> packed;           // the packed copy of a strided tensor for the network
  bool done = false;

  // Elements [first, first + count) of the tensor, row-major, to / from the
  // contiguous `buffer`.
  void pack(size_t first, size_t count, void* buffer) const;
  void unpack(const void* buffer, size_t first, size_t count) const;
  void pack_all(void* buffer) const { pack(0, nbytes / itemsize, buffer); }
  void unpack_all(const void* buffer) const { unpack(buffer, 0, nbytes / itemsize); }
  // Every element to or from a peer's symmetric buffer at `peer_data` in the
  // layout `l` the peer posted: one pass, strided to strided.
  void put_to(char* peer_data, const CompactLayout& l) const;
  void get_from(const char* peer_data, const CompactLayout& l) const;

  const char* op() const { return kind == P2POp::Kind::send ? "isend" : "irecv"; }
  MessageKey key() const { return {tag, tag_seq}; }
};

class P2PEngine : public std::enable_shared_from_this<P2PEngine> {
 public:
  explicit P2PEngine(ProcessGroup& g);
  ~P2PEngine();
  // Bumped by every engine's destruction: a cached engine pointer (api.cc) is
  // valid while the generation it was cached at is current.
  static std::atomic<uint64_t> generation;
  // Whether the engine `e` with id `id` still exists (a Work's engine may be
  // destroyed with its group before the Work is waited on).
  static bool alive(const P2PEngine* e, uint64_t id);
  uint64_t id() const { return id_; }

  // --- api.cc: the public calls, one progress pass each ---
  std::shared_ptr<P2PWork> isend(const Tensor& t, int peer, int tag);
  std::shared_ptr<P2PWork> irecv(const Tensor& t, int peer, int tag);
  std::vector<std::shared_ptr<P2PWork>> batch(const std::vector<P2POp>& ops);

  // --- api.cc / matching.cc: operations ---
  std::shared_ptr<P2PWork> make_work(P2POp::Kind kind, const Tensor& t, int peer, int tag);
  void post_recv(const std::shared_ptr<P2PWork>& w);
  void post_send(const std::shared_ptr<P2PWork>& w);

  // --- engine.cc: progress (the rule of progress.h) ---
  // One pass: consume every incoming event, poll the network, flush queued
  // events, drive staged sends, notify the peers published to. Never blocks.
  void progress();
  // Progresses until `w` completes; throws TimeoutError / PeerFailure.
  void wait(P2PWork& w);
  // Sum of every counter whose change can let a pending op progress: heads of
  // incoming rings, tails of outgoing rings, drained mailboxes. Only grows.
  uint64_t activity() const;
  // Operations posted and not complete.
  bool pending() const { return pending_ops_ != 0; }
  // Sends up to this size may go eager (at most runtime::kEagerMaxBytes; 0:
  // never). For side-by-side measurements (bench collectives: p2p rendezvous).
  void set_eager_max_bytes(size_t bytes) { eager_max_bytes_ = std::min(bytes, runtime::kEagerMaxBytes); }
  // diagnostics.cc. After one last pass: the sends no receive matched — mine still waiting
  // for a receive post, and peers' eager messages that arrived here and were
  // never received — one "; "-separated clause each, "" when none. For
  // teardown (progress.h: p2p_unmatched).
  std::string unmatched_sends();

 private:
  // A receive post as the sender sees it (from a recv_posted event).
  struct RecvPost {
    uint64_t tag_seq = 0;
    uint64_t nbytes = 0;
    int64_t heap_offset = -1;  // of the receive buffer; -1: not symmetric or no compact layout
    CompactLayout layout{};    // of the receive buffer
  };
  // Sender side: a receive post waiting for its send.
  struct WaitingPost {
    int32_t tag = 0;
    RecvPost post;
  };
  // Receiver side: an eager message that arrived before its receive was posted.
  struct EagerArrival {
    MessageKey key;
    uint64_t nbytes = 0;
    uint64_t slot = 0;
  };
  // Sender side: an eager slot holds the message `key` until the receiver frees it.
  struct EagerSlot {
    bool busy = false;
    MessageKey key;
  };
  // Operations waiting for an event, found by key. Few are in flight per peer
  // (a linear search beats a hash), and the vector keeps its capacity: no
  // allocation per message.
  using WorkList = std::vector<std::shared_ptr<P2PWork>>;

  struct PeerState {
    // --- shared memory (null when the peer is not on my node) ---
    runtime::P2PPairBlock* out = nullptr;  // me -> peer
    runtime::P2PPairBlock* in = nullptr;   // peer -> me
    runtime::WakeWord* wake = nullptr;     // the peer's wake word
    bool notify_due = false;               // published to the peer since the last notify
    // --- me as the receiver from this peer ---
    TagCounters recv_seq;
    WorkList recvs_waiting;  // posted, data not complete
    std::vector<EagerArrival> eager_unmatched;
    uint64_t mailbox_chunks_drained = 0;  // mailbox chunks (peer -> me) copied out
    // --- me as the sender to this peer ---
    TagCounters send_seq;
    // Sends waiting for their receive post and posts waiting for their send,
    // each in order (the first of a tag is the oldest); per tag at most one of
    // the two holds entries.
    WorkList sends_waiting;
    std::vector<WaitingPost> posts_waiting;
    WorkList sends_being_read;  // the peer reads them from my symmetric buffer
    std::deque<std::pair<std::shared_ptr<P2PWork>, RecvPost>> staged_sends;  // mailbox order
    size_t staged_bytes_sent = 0;         // bytes of staged_sends.front() already in the mailbox
    uint64_t mailbox_chunks_filled = 0;   // mailbox chunks (me -> peer) filled
    std::array<EagerSlot, runtime::kEagerSlots> eager_slots;
    int eager_slots_in_use = 0;
    // --- control rings: me -> peer (head) and peer -> me (tail) ---
    std::deque<runtime::P2PEvent> outbox;  // events waiting for room in the ring
    uint64_t ring_head = 0, ring_tail = 0;
    // The out ring's tail as last read: reloaded only when the ring looks full,
    // so that a push does not pull the line the receiver writes.
    uint64_t seen_tail = 0;
  };

  // --- matching.cc ---
  void on_recv_posted(int peer, const runtime::P2PEvent& e);
  void match(const std::shared_ptr<P2PWork>& send, const RecvPost& post);  // chooses the protocol
  int64_t symmetric_heap_offset(const Tensor& t) const;
  std::shared_ptr<P2PWork> take(WorkList& works, int peer, const runtime::P2PEvent& e);
  // One pass without the notifies (progress() = pass() + notify_peers()).
  void pass();
  void notify_peers();
  void complete(P2PWork& w);
  void fail_work(P2PWork& w, std::string message);
  std::string recv_size_mismatch(const P2PWork& recv, uint64_t sender_nbytes) const;
  std::string send_size_mismatch(const P2PWork& send, uint64_t receiver_nbytes) const;

  // --- shm_channel.cc ---
  runtime::P2PPairBlock& pair(int from, int to) const;
  runtime::P2PEvent event(runtime::P2PEventType type, const P2PWork& w) const;
  bool try_push(int peer, const runtime::P2PEvent& e);
  // Never blocks: queues when the ring is full. The peer is notified at the end
  // of the pass (notify_peers).
  void push(int peer, const runtime::P2PEvent& e);
  void flush(int peer);
  void consume(int peer);
  void handle(int peer, const runtime::P2PEvent& e);
  void put_into_receiver(const std::shared_ptr<P2PWork>& send, const RecvPost& post);
  void offer_for_reading(const std::shared_ptr<P2PWork>& send);
  void read_from_sender(int peer, const runtime::P2PEvent& e);

  // --- eager.cc ---
  bool try_send_eager(const std::shared_ptr<P2PWork>& send);
  bool crossed_eager_message(int peer, MessageKey key) const;
  void on_eager_message(int peer, const runtime::P2PEvent& e);
  void deliver_eager(int peer, P2PWork& recv, uint64_t nbytes, uint64_t slot);
  void on_eager_consumed(int peer, const runtime::P2PEvent& e);

  // --- mailbox.cc ---
  void drive_staged(int peer);
  void on_mailbox_chunk(int peer, const runtime::P2PEvent& e);

  // --- net_path.cc ---
  void post_net(const std::shared_ptr<P2PWork>& w);
  bool poll_net();  // true when any request completed

  // --- diagnostics.cc ---
  std::string describe(const P2PWork& w) const;
  std::string timeout_message(const P2PWork& w, double timeout_s, std::string_view what) const;

  ProcessGroup& group_;
  runtime::GroupSegment& segment_;  // this node's segment of the group
  int rank_;                        // my group rank
  std::vector<int> node_ranks_;     // group ranks on my node (shared memory), me included
  runtime::WakeWord* my_wake_;      // this rank's wake word
  char* my_heap_base_;              // this rank's symmetric heap in the segment
  std::vector<std::shared_ptr<P2PWork>> net_pending_;  // on the NetLink
  size_t pending_ops_ = 0;                             // posted, not complete
  std::vector<PeerState> peers_;                       // by group rank
  size_t eager_max_bytes_ = runtime::kEagerMaxBytes;
  uint64_t id_;  // unique per process (a new engine may reuse a freed address)
};

namespace detail {
// The engine of `g` sends eagerly up to `bytes` from now on (measurements only).
void p2p_set_eager_max_bytes(ProcessGroup& g, size_t bytes);
}  // namespace detail

}  // namespace symmflow::dist
