// Per-group state of the collectives: announcement buffer, push slots,
// workspace, signal counters, descriptor checks; and the tensor helpers.
#include <atomic>
#include <cstdlib>

#include "symmflow/core/error.h"
#include "symmflow/core/params.h"
#include "symmflow/core/overlap.h"
#include "symmflow/core/strided.h"
#include "symmflow/runtime/collectives/coll_queue.h"
#include "symmflow/runtime/collectives/coll_state.h"
#include "symmflow/runtime/world.h"

namespace symmflow::dist::detail {

namespace {

// Every live state, for existing_coll_state() (a handful of groups at most).
std::vector<CollState*> g_states;

size_t round_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

std::string_view kind_name(Kind k) {
  switch (k) {
    case Kind::all_reduce: return "all_reduce";
    case Kind::all_gather: return "all_gather";
    case Kind::reduce_scatter: return "reduce_scatter";
    case Kind::all_to_all: return "all_to_all_single";
    case Kind::broadcast: return "broadcast";
    case Kind::tile_reduce: return "tile_reduce";
  }
  return "?";
}

// Signal channels by name, for timeout messages ("channel 4 (DONE)").
constexpr std::string_view kChannelLabels[kNumChannels] = {
    "channel 0", "channel 1", "channel 2 (READY)", "channel 3 (PHASE)", "channel 4 (DONE)",
    "channel 5 (SETUP)"};

std::string_view proto_name(Proto p) {
  switch (p) {
    case Proto::push: return "push";
    case Proto::pull: return "pull";
    case Proto::two_shot: return "two-shot";
  }
  return "?";
}

}  // namespace

size_t nt_min_bytes() {
  static const size_t v = params::bytes("SYMMFLOW_NT_MIN_BYTES");
  return v;
}

void copy_out(void* dst, const void* src, size_t n) {
  if (n >= nt_min_bytes()) copy_bytes_stream(dst, src, n);
  else copy_bytes(dst, src, n);
}

std::string describe(const Desc& d) {
  if (d.call_no == 0) return "nothing yet";
  std::string s = fmt::format("{}({}, {} elements", kind_name(d.kind),
                              dtype_name(DType(d.dtype)), d.numel);
  if (d.kind == Kind::tile_reduce) s += fmt::format(", {} rows", d.aux);
  if (d.op >= 0) s += fmt::format(", {}", reduce_op_name(ReduceOp(d.op)));
  if (d.root >= 0) s += fmt::format(", root {}", d.root);
  return s + fmt::format(") [call #{}, {} protocol]", d.call_no, proto_name(d.proto));
}

void* Scratch::get(size_t bytes) {
  if (bytes > cap_) {
    std::free(p_);
    cap_ = round_up(std::max<size_t>(bytes, 4096), 4096);
    p_ = std::aligned_alloc(64, cap_);
    SF_CHECK(p_ != nullptr, "collectives: out of memory allocating {} bytes of scratch", cap_);
  }
  return p_;
}

Scratch::~Scratch() { std::free(p_); }

CollState::CollState(ProcessGroup& group)
    : g(group), W(group.size()), me(group.rank()), ptrs(size_t(group.size())),
      bases(size_t(group.size())) {
  for (int p = 0; p < W; ++p)
    SF_CHECK(g.is_shm_reachable(p), "collectives of group '{}': rank {} cannot load/store the "
             "heap of rank {} (only the shm backend is implemented)", g.name(), me, p);
  expect_.assign(size_t(kNumChannels) * size_t(W), 0);
  heap_base_ = g.heap().local_base();
  for (int p = 0; p < W; ++p) peer_heap_.push_back(g.heap().peer_base(p));
  heap_cap_ = g.heap().capacity();
  // Collective allocations, the same on every rank: this state is created by
  // the first collective call of the group, which every rank makes.
  meta_stride_ = round_up(kHeaderBytes + 8 * size_t(W), 64);
  meta_ = g.heap().allocate(meta_stride_);
  // Measured at 2 pinned ranks: push wins below ~2 KiB (one sync instead of
  // two); from 4 KiB, pull moves each byte across cores once instead of twice
  // (all_gather 64 KiB: 4.0 us pull vs 6.9 us push; one-shot all_reduce into
  // a regular out: 4.0 vs 8.0 us). SYMMFLOW_PUSH_MAX_BYTES overrides (tuning).
  push_max_ = std::min(slot_payload(W), params::bytes("SYMMFLOW_PUSH_MAX_BYTES"));
  slot_stride_ = kPushHeaderBytes + round_up(push_max_, 64);
  slots_ = g.heap().allocate(2 * size_t(W) * slot_stride_);
  std::memset(meta_->data(), 0, meta_stride_);
  std::memset(slots_->data(), 0, 2 * size_t(W) * slot_stride_);
  // Nobody may push into my slots before I zeroed them. Not g.barrier(): this
  // wait drives the group's pending P2P (progress.h), since a peer may be
  // waiting for this rank's send before it makes its own first collective call.
  signal_all(kChSetup);
  for (int i = 1; i < W; ++i) {
    const int p = (me + W - i) % W;
    wait_driving_p2p(g, Blocked{{}, &g.signals().incoming(p, kChSetup), 1, p, "collectives setup",
                                kChannelLabels[kChSetup]});
  }
  g_states.push_back(this);
}

namespace {
// ProcessGroup::extension() hashes a type name per call (~25 ns, a tenth of a
// small all_reduce): remember the last group's state. A destroyed state bumps
// the generation, so a new group at a recycled address never hits a stale entry.
std::atomic<uint64_t> g_generation{0};
struct StateCache {
  ProcessGroup* g = nullptr;
  CollState* st = nullptr;
  uint64_t gen = 0;
};
thread_local StateCache t_cache;
}  // namespace

CollState* existing_coll_state(ProcessGroup& g) {
  StateCache& c = t_cache;
  if (c.g == &g && c.gen == g_generation.load(std::memory_order_relaxed)) return c.st;
  for (CollState* st : g_states)
    if (&st->g == &g) return st;
  return nullptr;
}

CollState::~CollState() {
  // Calls still in flight end with an error in their Work (coll_queue.cc).
  abandon_queue(*this);
  std::erase(g_states, this);
  g_generation.fetch_add(1, std::memory_order_relaxed);
}

CollState& coll_state(ProcessGroup& g) {
  StateCache& c = t_cache;
  const uint64_t gen = g_generation.load(std::memory_order_relaxed);
  if (c.g == &g && c.gen == gen) return *c.st;
  CollState& st = detail::GroupAccess::extension<CollState>(g);
  c = {&g, &st, gen};
  return st;
}

Desc CollState::begin(Kind kind, Proto proto, DType dtype, int op, int root, int64_t numel,
                      int64_t aux) {
  Desc d;
  d.call_no = ++call_no_;
  d.kind = kind;
  d.proto = proto;
  d.dtype = uint32_t(dtype);
  d.op = op;
  d.root = root;
  d.numel = numel;
  d.aux = aux;
  return d;
}

void CollState::check_peer(const Desc& mine, const Desc& theirs, int peer, std::string_view what) {
  if (mine.call_no == theirs.call_no && mine.kind == theirs.kind && mine.proto == theirs.proto &&
      mine.dtype == theirs.dtype && mine.op == theirs.op && mine.root == theirs.root &&
      mine.numel == theirs.numel && mine.aux == theirs.aux)
    return;
  const Desc& t = theirs;
  std::string theirs_s = t.call_no == mine.call_no
      ? fmt::format("calls {}", describe(t))
      : fmt::format("has not announced this call (its last announcement: {}); the ranks called "
                    "different sequences of collectives", describe(t));
  fail("{}: ranks disagree at collective call #{} of group '{}': rank {} calls {} but rank {} {}. "
       "Every rank must call the same collectives in the same order with tensors of the same "
       "dtype and size.", what, mine.call_no, g.name(), me, describe(mine), peer, theirs_s);
}

void CollState::signal_all(int ch) {
  for (int i = 1; i < W; ++i) g.signals().signal((me + i) % W, ch);
}

CollTask CollState::wait_from(int peer, int ch, std::string_view what) {
  uint64_t& e = expect_[size_t(ch) * size_t(W) + size_t(peer)];
  co_await WordAwait{&blocked, &g.signals().incoming(peer, ch), ++e, peer, what, kChannelLabels[ch]};
}

CollTask CollState::wait_all(int ch, std::string_view what) {
  for (int i = 1; i < W; ++i) co_await wait_from((me + W - i) % W, ch, what);
}

CollTask CollState::arrivals(const Desc& d, std::string_view what) {
  for (int i = 1; i < W; ++i) {
    const int p = (me + W - i) % W;
    const char* line = my_slot_at(me, d.call_no, p);
    co_await WordAwait{&blocked, reinterpret_cast<const std::atomic<uint64_t>*>(line + kArrivalFlagAt),
                       d.call_no, p, what, "arrival flag"};
    check_peer(d, *reinterpret_cast<const Desc*>(line), p, what);
  }
}

char* CollState::my_slot_at(int peer, uint64_t call, int src) const {
  size_t off = size_t(static_cast<char*>(slots_->data()) - heap_base_);
  return peer_heap_[size_t(peer)] + off + ((call % 2) * size_t(W) + size_t(src)) * slot_stride_;
}

const char* CollState::slot(int src) const {
  return my_slot_at(me, call_no_, src) + kPushHeaderBytes;
}

const Desc& CollState::slot_header(int src) const {
  return *reinterpret_cast<const Desc*>(my_slot_at(me, call_no_, src));
}

void CollState::announce(const Desc& d, const int64_t* extra, int nextra) {
  char* m = static_cast<char*>(meta_->data());
  std::memcpy(m, &d, sizeof d);
  if (nextra) std::memcpy(m + kHeaderBytes, extra, size_t(nextra) * 8);
}

const Desc& CollState::peer_desc(int p) const {
  size_t off = size_t(static_cast<char*>(meta_->data()) - heap_base_);
  return *reinterpret_cast<const Desc*>(peer_heap_[size_t(p)] + off);
}

const int64_t* CollState::peer_extra(int p) const {
  return reinterpret_cast<const int64_t*>(reinterpret_cast<const char*>(&peer_desc(p)) +
                                          kHeaderBytes);
}

char* CollState::ws_base(int p) const {
  if (!ws_) return nullptr;
  return peer_heap_[size_t(p)] + (static_cast<char*>(ws_->data()) - heap_base_);
}

const char* CollState::peer_src(int p) const {
  const Desc& d = peer_desc(p);
  return (d.flags & kSrcInWs ? ws_base(p) : peer_heap_[size_t(p)]) + d.src_off;
}

const char* CollState::peer_red(int p) const {
  const Desc& d = peer_desc(p);
  return (d.flags & kRedInWs ? ws_base(p) : peer_heap_[size_t(p)]) + d.red_off;
}

void CollState::grow_ws(size_t bytes) {
  // Powers of two from 1 MiB: a few growths over a run, then the size is stable.
  size_t cap = size_t(1) << 20;
  while (cap < bytes) cap *= 2;
  ws_.reset();  // collective free, then collective allocation (same on all ranks)
  ws_ = g.heap().allocate(cap);
  ws_cap_ = cap;
}

int64_t CollState::heap_offset(const Tensor& t, bool allow_strided) const {
  if (!t.is_symmetric() || (!allow_strided && !t.is_contiguous())) return -1;
  const char* p = static_cast<const char*>(t.data_ptr());
  if (p < heap_base_ || p >= heap_base_ + heap_cap_) return -1;  // another group's heap
  return p - heap_base_;
}

// ----------------------------------------------------------------- tensors

// core/strided.h's pack and unpack, with copy_bytes for the runs (see
// reduce_kernels.h: glibc's memcpy is slow at some offsets between views).
void pack(const Tensor& t, void* dst) { symmflow::pack(t, dst, copy_bytes); }
void unpack(const void* src, const Tensor& t) { symmflow::unpack(src, t, copy_bytes); }
bool overlaps(const Tensor& a, const Tensor& b) { return may_overlap(a, b); }

void check_data(const Tensor& t, std::string_view what, std::string_view arg) {
  SF_CHECK(t.defined() && !t.is_meta(), "{}: expected `{}` to be a tensor with data, got {}", what,
           arg, t.defined() ? t.type_string() + " (meta)" : std::string("an undefined tensor"));
}

}  // namespace symmflow::dist::detail
