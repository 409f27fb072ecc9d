// Internals shared by the collective algorithms (collectives/*.cc): the per-group
// state (call counter, announcement buffer, push slots, workspace) and the two
// protocols every algorithm is built from. Algorithms are coroutines
// (coll_task.h): every wait below is a `co_await`.
//
// ARRIVAL (every call, both protocols): rank s announces call c to peer p by
// writing the call's header (Desc up to `flags`) into its slot
// [c % 2][s] in p's push buffer, payload first, then the header line whose
// last 8 bytes are a flag set to c with release order. The receiver polls
// that one flag, in the same cache line as the header (and right before the
// payload): one poll, no separate signal (the low-latency protocol for small
// messages). Then it compares the header with its own call: ranks that called
// different collectives, with different arguments or through different
// protocols, get an Error naming both calls instead of garbage or a hang.
//
// PUSH (small messages, one synchronisation): the arrival carries the payload
// for p. No exit barrier: a sender reuses slot parity c % 2 only at call c + 2,
// and by then it has seen the peer's call c + 1 arrival, which the peer writes
// only after it finished call c (calls of a group run one at a time, in issue
// order). Every rank writes (at least a header) to every peer in every call,
// which is what makes that argument hold for all calls.
//
// PULL (large messages, zero copy): every rank first writes where its data is
// (a heap offset, or an offset inside the workspace) into its announcement
// buffer, then arrives; after every peer's arrival it reads peers' data in
// place, then DONE (exit): nobody returns before every peer has finished
// reading its buffers, so the caller may overwrite them at once. When a
// workspace must grow, all ranks grow it together (to the largest need
// announced) and sync once more (READY) before data is read.
//
// Channels (SignalPad): collectives use 1..15 only (READY, PHASE, DONE, SETUP).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstddef>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "symmflow/core/tensor.h"
#include "symmflow/runtime/collectives/collectives.h"
#include "symmflow/runtime/copy_stats.h"
#include "symmflow/runtime/process_group_internal.h"
#include "symmflow/runtime/collectives/coll_task.h"
#include "symmflow/runtime/collectives/reduce_kernels.h"

namespace symmflow::dist::detail {

// Channel 1 is no longer used (arrivals are flags in the push slots).
inline constexpr int kChReady = 2;
inline constexpr int kChPhase = 3;
inline constexpr int kChDone = 4;
inline constexpr int kChSetup = 5;      // once per group: the state's slots are zeroed
inline constexpr int kNumChannels = 6;  // 0..5 used; 6..15 free for later algorithms

// The largest push payload per peer that SYMMFLOW_PUSH_MAX_BYTES may ask for:
// 256 KiB up to 8 ranks, then less, so that the 2 x W slots stay <= 4 MiB.
inline size_t slot_payload(int W) {
  return std::clamp<size_t>((size_t(2) << 20) / size_t(std::max(W, 1)), 16 << 10, 256 << 10);
}
inline constexpr size_t kDefaultPushMax = 2048;  // push up to this, pull above (per peer)
inline constexpr size_t kHeaderBytes = 128;     // an announcement: Desc + extra words after it
inline constexpr size_t kPushHeaderBytes = 64;  // a push slot's header line: Desc up to `flags`, flag
inline constexpr size_t kArrivalFlagAt = 56;    // the flag: the header line's last 8 bytes

enum class Kind : uint32_t { all_reduce = 1, all_gather, reduce_scatter, all_to_all, broadcast, tile_reduce };
enum class Proto : uint32_t { push = 1, pull = 2, two_shot = 3 };

// Flags of Desc::flags.
inline constexpr uint32_t kSrcInWs = 1;    // src_off is relative to the workspace
inline constexpr uint32_t kRedInWs = 2;    // red_off is relative to the workspace
inline constexpr uint32_t kDataReady = 4;  // data was in place at ARRIVE
inline constexpr uint32_t kOutWritable = 8;  // out_off: my output, peers may write it

// What a rank announces about a call. Every field up to `aux` must agree across
// ranks; the rest says where this rank's data is.
struct Desc {
  uint64_t call_no = 0;
  Kind kind{};
  Proto proto{};
  uint32_t dtype = 0;
  int32_t op = -1;  // ReduceOp, -1 when none
  int32_t root = -1;
  uint32_t pad_ = 0;
  int64_t numel = 0;  // the size every rank must agree on (per collective)
  int64_t aux = 0;    // second agreed quantity (rows of a tile, row elements)
  // --- per rank, not compared; pull only (not in a push header) ---
  uint32_t flags = 0;
  uint32_t pad2_ = 0;
  uint64_t src_off = 0;   // heap offset (or workspace offset) of my readable data
  uint64_t red_off = 0;   // two-shot: where my reduced chunk is
  uint64_t out_off = 0;   // two-shot: heap offset of my (symmetric) output
  int64_t pitch = 0;      // tile_reduce: row pitch of my readable tile, elements
  uint64_t ws_need = 0;   // workspace bytes this rank needs for this call
};
static_assert(sizeof(Desc) <= kHeaderBytes);
static_assert(offsetof(Desc, flags) <= kArrivalFlagAt);

std::string describe(const Desc& d);

// Scratch memory of this process (not symmetric), reused between calls.
class Scratch {
 public:
  void* get(size_t bytes);
  ~Scratch();

 private:
  void* p_ = nullptr;
  size_t cap_ = 0;
};

class CollWork;

// What a rank pushes to one peer (arrive): `bytes` from `ptr`, or a tensor
// whose elements are packed straight into the peer's slot (`strided`): the
// pack is the push itself, so a strided tile moves once, not packed aside and
// copied again.
struct Payload {
  const void* ptr = nullptr;
  size_t bytes = 0;
  const Tensor* strided = nullptr;
  Payload() = default;
  Payload(const void* p, size_t n) : ptr(p), bytes(n) {}
  static Payload packed(const Tensor& t) {
    Payload pl;
    pl.bytes = t.nbytes();
    pl.strided = &t;
    return pl;
  }
};

class CollState {
 public:
  explicit CollState(ProcessGroup& g);
  ~CollState();
  CollState(const CollState&) = delete;
  CollState& operator=(const CollState&) = delete;

  ProcessGroup& g;
  const int W, me;

  // --- descriptors ---
  Desc begin(Kind kind, Proto proto, DType dtype, int op, int root, int64_t numel, int64_t aux);
  void check_peer(const Desc& mine, const Desc& theirs, int peer, std::string_view what);

  // --- signals (READY, PHASE, DONE) ---
  void signal_all(int ch);
  CollTask wait_from(int peer, int ch, std::string_view what);
  CollTask wait_all(int ch, std::string_view what);

  // --- arrival and push ---
  // Writes payload(p) (a Payload of bytes <= push_max()) and d's header into my slot of
  // every peer p, then sets the arrival flags (no waiting).
  template <class F>
  void arrive(const Desc& d, F&& payload);
  // Waits for every peer's arrival for d's call and checks its header.
  CollTask arrivals(const Desc& d, std::string_view what);
  // Both, for the push protocol: after it, slot(p) holds what p pushed to me.
  template <class F>
  CollTask push_exchange(Desc d, F payload, std::string_view what) {
    arrive(d, payload);
    co_await arrivals(d, what);
  }
  const char* slot(int src) const;  // payload peer `src` pushed to me in this call
  const Desc& slot_header(int src) const;
  size_t push_max() const { return push_max_; }

  // --- pull protocol ---
  // Announces d (and `extra` int64 words, e.g. splits), arrives, checks all peers.
  // `stage` is called to copy my data into the workspace when d.flags has
  // kSrcInWs (before arriving if the workspace is big enough, else after the
  // collective growth, then once more READY); it counts what it copies.
  template <class F>
  CollTask pull_begin(Desc& d, const int64_t* extra, int nextra, F stage, std::string_view what);
  const Desc& peer_desc(int p) const;
  const int64_t* peer_extra(int p) const;
  // Address of peer p's data at `off` (flagged relative to workspace or heap).
  const char* peer_src(int p) const;
  const char* peer_red(int p) const;
  char* peer_out(int p) const { return peer_heap_[size_t(p)] + peer_desc(p).out_off; }
  char* ws_local() const { return ws_base(me); }
  CollTask pull_end(std::string_view what) {
    signal_all(kChDone);
    co_await wait_all(kChDone, what);
  }

  // Heap offset of a tensor that peers may read in place: symmetric, contiguous
  // (or, with allow_strided, any view), in this group's heap. -1 otherwise.
  int64_t heap_offset(const Tensor& t, bool allow_strided = false) const;
  // W pointers, reused between calls (no allocation on the latency path).
  std::vector<const void*> ptrs;
  std::vector<const char*> bases;

  // Process-local scratch: my packed input, an output to unpack from, the
  // cached block that non-temporal output stores go through.
  Scratch input_scratch, output_scratch, stream_scratch;

  // --- the queue of calls in flight (coll_queue.cc) ---
  // What the running algorithm waits for (valid while it is suspended).
  Blocked blocked;
  std::deque<std::shared_ptr<CollWork>> queue;  // issue order; the front runs
  // Runs a step to completion on the calling thread (the hierarchical
  // collectives' node phases, which are blocking code).
  void run(CollTask t);

 private:
  char* ws_base(int p) const;
  void grow_ws(size_t bytes);
  char* my_slot_at(int peer, uint64_t call, int src) const;
  void announce(const Desc& d, const int64_t* extra, int nextra);

  uint64_t call_no_ = 0;
  std::vector<uint64_t> expect_;  // [channel][peer]: signals consumed
  std::shared_ptr<Storage> meta_, slots_, ws_;
  size_t meta_stride_ = 0, slot_stride_ = 0, ws_cap_ = 0;
  size_t push_max_ = 0;
  char* heap_base_ = nullptr;
  std::vector<char*> peer_heap_;  // byte 0 of every rank's heap
  size_t heap_cap_ = 0;
};

// The collectives' state of a group (created by its first collective call).
CollState& coll_state(ProcessGroup& g);
// The state if the group ran a collective already, else nullptr (never creates:
// creating it is a collective allocation).
CollState* existing_coll_state(ProcessGroup& g);

// Copies of at least this many bytes into a collective's output bypass the
// cache (non-temporal stores): at these sizes the output does not fit in the
// cache anyway and nothing in the call reads it again. SYMMFLOW_NT_MIN_BYTES
// overrides the default of 8 MiB (measured: 2-4 MiB copies lose, 8 MiB+ win).
size_t nt_min_bytes();
// copy_bytes, or copy_bytes_stream from nt_min_bytes() up.
void copy_out(void* dst, const void* src, size_t n);

// Groups that span nodes (collectives/hier/): called by the public functions
// after they validated the arguments. Shared memory inside each node, the
// group's NetLink between nodes, contributions still folded in rank order.
CollectiveResult hier_all_reduce(ProcessGroup& g, const Tensor& in, const Tensor& out, ReduceOp op);
CollectiveResult hier_all_gather(ProcessGroup& g, const Tensor& in, const Tensor& out);
CollectiveResult hier_reduce_scatter(ProcessGroup& g, const Tensor& in, const Tensor& out, ReduceOp op);
CollectiveResult hier_all_to_all(ProcessGroup& g, const Tensor& in, const Tensor& out,
                                 const std::vector<int64_t>& out_splits,
                                 const std::vector<int64_t>& in_splits);
CollectiveResult hier_broadcast(ProcessGroup& g, const Tensor& t, int src);
CollectiveResult hier_tile_reduce(ProcessGroup& g, const Tensor& in_tile, const Tensor& out_tile,
                                  int root, ReduceOp op);

// Tensor helpers.
void pack(const Tensor& t, void* dst);          // t's elements, row-major, contiguous
void unpack(const void* src, const Tensor& t);  // the inverse
bool overlaps(const Tensor& a, const Tensor& b);
void check_data(const Tensor& t, std::string_view what, std::string_view arg);

// Counts a copy that exists only because a tensor is not symmetric/contiguous.
inline void count_staged(CollectiveResult& r, uint64_t bytes) {
  if (bytes == 0) return;
  count_staged_copy(bytes);
  r.staged = true;
  r.staged_bytes += bytes;
}

// Adds what an inner collective (run on a node group) copied to `r`; its
// copies were counted globally when they happened.
inline void absorb(CollectiveResult& r, const CollectiveResult& inner) {
  r.staged |= inner.staged;
  r.staged_bytes += inner.staged_bytes;
}

// First element of chunk i when n elements are split in W parts (chunk i is
// [chunk_begin(i), chunk_begin(i + 1))); boundaries fall on cache lines.
inline int64_t chunk_begin(int64_t n, int W, int i, size_t itemsize) {
  if (i >= W) return n;
  int64_t a = int64_t(64 / itemsize);
  int64_t b = n * i / W;
  return std::min(n, b / a * a);
}

// ------------------------------------------------------------------ templates

template <class F>
void CollState::arrive(const Desc& d, F&& payload) {
  for (int i = 1; i < W; ++i) {
    const int p = (me + i) % W;
    const Payload pl = payload(p);
    char* dst = my_slot_at(p, d.call_no, me);  // my slot in p's buffer
    if (pl.strided) pack(*pl.strided, dst + kPushHeaderBytes);
    else if (pl.bytes) copy_bytes(dst + kPushHeaderBytes, pl.ptr, pl.bytes);
    std::memcpy(dst, &d, offsetof(Desc, flags));
    // Release: the payload and header above are visible to whoever sees the flag.
    reinterpret_cast<std::atomic<uint64_t>*>(dst + kArrivalFlagAt)
        ->store(d.call_no, std::memory_order_release);
  }
  for (int i = 1; i < W; ++i) g.signals().wake((me + i) % W);
}

template <class F>
CollTask CollState::pull_begin(Desc& d, const int64_t* extra, int nextra, F stage,
                               std::string_view what) {
  if ((d.flags & kSrcInWs) && d.ws_need <= ws_cap_) {
    stage();
    d.flags |= kDataReady;
  } else if (!(d.flags & kSrcInWs)) {
    d.flags |= kDataReady;
  }
  announce(d, extra, nextra);
  arrive(d, [](int) { return Payload(); });
  co_await arrivals(d, what);
  uint64_t need = d.ws_need;
  bool all_ready = d.flags & kDataReady;
  for (int i = 1; i < W; ++i) {
    const Desc& pd = peer_desc((me + W - i) % W);
    need = std::max<uint64_t>(need, pd.ws_need);
    all_ready = all_ready && (pd.flags & kDataReady);
  }
  if (need > ws_cap_) {  // every rank sees the same need: grow together
    grow_ws(need);
    if (d.flags & kSrcInWs) stage();  // (again: the old workspace is gone)
    all_ready = false;
  } else if (!(d.flags & kDataReady)) {
    stage();
  }
  if (!all_ready) {
    signal_all(kChReady);
    co_await wait_all(kChReady, what);
  }
}

}  // namespace symmflow::dist::detail
