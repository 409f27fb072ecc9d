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
// (recv_posted: size, heap offset when symmetric + contiguous). s then
//  - rendezvous (s has r's post when it sends): puts the data straight into
//    r's symmetric buffer (put_done), or lets r read it from its own symmetric
//    buffer (send_ready / read_done), or stages it through the mailbox
//    (mailbox_chunk), or reports a size mismatch;
//  - eager (no post yet, at most kEagerMaxBytes, a free eager slot): copies the
//    message into a slot (eager_message); r matches it with the receive of the
//    same key, copies it out and frees the slot (eager_consumed), which also
//    completes s's send (so that a size mismatch fails both sides). A post that
//    crosses an eager message on the way is dropped by s (the slot is still in
//    use when it arrives: r frees it only after its post, on the same ring).
//
// Progress is single-threaded and explicit: progress() consumes all incoming
// control events, polls the network, flushes queued events and drives staged
// sends. Nothing blocks except wait(), which sleeps in wait_slow() on this
// rank's wake word until any counter it depends on moves (activity()).
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "symmflow/runtime/p2p/channel.h"
#include "symmflow/runtime/p2p/p2p.h"
#include "symmflow/runtime/p2p/tensor_layout.h"
#include "symmflow/runtime/process_group_internal.h"

namespace symmflow::dist {

class P2PEngine;

// Names one message of a directed pair: its tag and its number within the tag.
struct MessageKey {
  int32_t tag = 0;
  uint64_t tag_seq = 0;  // from 1
  bool operator==(const MessageKey&) const = default;
};
struct MessageKeyHash {
  size_t operator()(const MessageKey& k) const {
    return size_t(k.tag_seq * 0x9E3779B97F4A7C15ull ^ uint32_t(k.tag));
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
    eager,    // send: in an eager slot, waiting for the receiver to take it
    net,      // on the NetLink (peer on another node)
    done,
  };
  P2POp::Kind kind;
  std::weak_ptr<P2PEngine> engine;
  int peer = 0, tag = 0;
  uint64_t tag_seq = 0;  // per (peer, tag), from 1
  Tensor tensor;
  TensorLayout layout;
  size_t nbytes = 0;
  int64_t heap_offset = -1;      // of the data in the group's heap when symmetric + contiguous
  size_t bytes_transferred = 0;  // staged transfers
  State state = State::queued;
  NetLink::Request net_request = -1;  // peer on another node
  std::vector<char> packed;           // the packed copy of a strided tensor for the network
  bool done = false;

  const char* op() const { return kind == P2POp::Kind::send ? "isend" : "irecv"; }
  MessageKey key() const { return {tag, tag_seq}; }
};

class P2PEngine : public std::enable_shared_from_this<P2PEngine> {
 public:
  explicit P2PEngine(ProcessGroup& g);

  // --- api.cc / matching.cc: operations ---
  std::shared_ptr<P2PWork> make_work(P2POp::Kind kind, const Tensor& t, int peer, int tag);
  void post_recv(const std::shared_ptr<P2PWork>& w);
  void post_send(const std::shared_ptr<P2PWork>& w);

  // --- engine.cc: progress (the rule of progress.h) ---
  // One pass: consume every incoming event, poll the network, flush queued
  // events, drive staged sends. Never blocks.
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

 private:
  // A receive post as the sender sees it (from a recv_posted event).
  struct RecvPost {
    uint64_t tag_seq = 0;
    uint64_t nbytes = 0;
    int64_t heap_offset = -1;  // of the receive buffer; -1: not symmetric + contiguous
  };
  // Sender side, per tag: at most one of the two queues is non-empty.
  struct TagMatchQueue {
    std::deque<std::shared_ptr<P2PWork>> sends_waiting;  // sends waiting for a receive post
    std::deque<RecvPost> posts_waiting;                  // receive posts waiting for a send
  };
  // Receiver side: an eager message that arrived before its receive was posted.
  struct EagerArrival {
    uint64_t nbytes = 0;
    uint64_t slot = 0;
  };
  using WorkByKey = std::unordered_map<MessageKey, std::shared_ptr<P2PWork>, MessageKeyHash>;

  struct PeerState {
    // --- me as the receiver from this peer ---
    std::unordered_map<int, uint64_t> recv_seq_by_tag;
    WorkByKey recvs_waiting;  // posted, data not complete
    std::unordered_map<MessageKey, EagerArrival, MessageKeyHash> eager_unmatched;
    uint64_t mailbox_chunks_drained = 0;  // mailbox chunks (peer -> me) copied out
    // --- me as the sender to this peer ---
    std::unordered_map<int, uint64_t> send_seq_by_tag;
    std::unordered_map<int, TagMatchQueue> match_queues;
    WorkByKey sends_being_read;  // the peer reads them from my symmetric buffer
    std::deque<std::pair<std::shared_ptr<P2PWork>, RecvPost>> staged_sends;  // mailbox order
    size_t staged_bytes_sent = 0;         // bytes of staged_sends.front() already in the mailbox
    uint64_t mailbox_chunks_filled = 0;   // mailbox chunks (me -> peer) filled
    std::array<std::shared_ptr<P2PWork>, runtime::kEagerSlots> eager_slot_sends;  // null: free
    int eager_slots_in_use = 0;
    // --- control rings: me -> peer (head) and peer -> me (tail) ---
    std::deque<runtime::P2PEvent> outbox;  // events waiting for room in the ring
    uint64_t ring_head = 0, ring_tail = 0;
  };

  // --- matching.cc ---
  void on_recv_posted(int peer, const runtime::P2PEvent& e);
  void match(const std::shared_ptr<P2PWork>& send, const RecvPost& post);  // chooses the protocol
  int64_t symmetric_heap_offset(const Tensor& t) const;
  std::shared_ptr<P2PWork> take(WorkByKey& works, int peer, const runtime::P2PEvent& e);
  void complete(P2PWork& w);
  void fail_work(P2PWork& w, std::string message);
  std::string recv_size_mismatch(const P2PWork& recv, uint64_t sender_nbytes) const;
  std::string send_size_mismatch(const P2PWork& send, uint64_t receiver_nbytes) const;

  // --- shm_channel.cc ---
  runtime::P2PPairBlock& pair(int from, int to) const;
  runtime::WakeWord& wake(int peer) const;
  runtime::P2PEvent event(runtime::P2PEventType type, const P2PWork& w) const;
  bool try_push(int peer, const runtime::P2PEvent& e);
  void push(int peer, const runtime::P2PEvent& e);  // never blocks: queues when the ring is full
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
  void deliver_eager(int peer, P2PWork& recv, const EagerArrival& arrival);
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
  std::vector<std::shared_ptr<P2PWork>> net_pending_;  // on the NetLink
  size_t pending_ops_ = 0;                             // posted, not complete
  std::vector<PeerState> peers_;                       // by group rank
  size_t eager_max_bytes_ = runtime::kEagerMaxBytes;
};

namespace detail {
// The engine of `g` sends eagerly up to `bytes` from now on (measurements only).
void p2p_set_eager_max_bytes(ProcessGroup& g, size_t bytes);
}  // namespace detail

}  // namespace symmflow::dist
