// all_reduce: one-shot (push for small messages, pull for larger ones) and
// two-shot (reduce-scatter of W chunks, then all-gather), plus the names and
// thresholds of collectives.h. Protocols: coll_state.h.
#include <cstdlib>

#include "symmflow/core/error.h"
#include "symmflow/core/params.h"
#include "symmflow/runtime/collectives/coll_queue.h"
#include "symmflow/runtime/debug_log.h"
#include "symmflow/runtime/collectives/reduce_kernels.h"
#include "symmflow/runtime/world.h"

namespace symmflow::dist {

using namespace detail;

ReduceOp parse_reduce_op(std::string_view s) {
  if (s == "sum") return ReduceOp::sum;
  if (s == "avg") return ReduceOp::avg;
  if (s == "max") return ReduceOp::max;
  if (s == "min") return ReduceOp::min;
  if (s == "product") return ReduceOp::product;
  fail("unknown reduce op '{}': expected one of sum, avg, max, min, product", s);
}

std::string_view reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return "sum";
    case ReduceOp::avg: return "avg";
    case ReduceOp::max: return "max";
    case ReduceOp::min: return "min";
    case ReduceOp::product: return "product";
  }
  return "?";
}

std::string_view algo_name(AllReduceAlgo a) {
  switch (a) {
    case AllReduceAlgo::automatic: return "automatic";
    case AllReduceAlgo::one_shot: return "one_shot";
    case AllReduceAlgo::two_shot: return "two_shot";
    case AllReduceAlgo::hierarchical: return "hierarchical";
  }
  return "?";
}

namespace {

// Measured at 2 pinned ranks (symmetric tensors, collectives_perf_test.cc):
// the push one-shot wins up to ~2 KiB (1 KiB: 0.24 us vs 0.40 us), the fused
// two-shot from 4 KiB on (4 KiB: 0.45 us vs 0.53 us; 64 KiB: 2.8 us vs 6.3 us).
constexpr size_t kMeasuredOneShotMax = 2048;

AlgorithmThresholds& thresholds_mut() {
  static AlgorithmThresholds t = [] {
    AlgorithmThresholds r;
    r.one_shot_max_bytes = kMeasuredOneShotMax;
    if (params::is_set("SYMMFLOW_ONE_SHOT_MAX_BYTES"))
      r.one_shot_max_bytes = params::bytes("SYMMFLOW_ONE_SHOT_MAX_BYTES");
    return r;
  }();
  return t;
}

bool same_view(const Tensor& a, const Tensor& b) {
  return a.data_ptr() == b.data_ptr() && a.sizes() == b.sizes() && a.strides() == b.strides() &&
         a.dtype() == b.dtype();
}

// Reduces elements [x0, x1) of every rank's source (st.bases, byte addresses of
// element 0) into dst and, if `also` differs from dst, into `also` too, in
// 64 KiB blocks so that the second copy comes from the cache. Outputs of
// nt_min_bytes() and more (far beyond the cache) go out with non-temporal
// stores through a cached block: no read-for-ownership of the output.
void reduce_range(CollState& st, DType dt, ReduceOp op, int64_t x0, int64_t x1, size_t isz,
                  char* dst, char* also, bool allow_stream) {
  const int64_t blk = int64_t((64 << 10) / isz);
  const bool stream = allow_stream && size_t(x1 - x0) * isz >= nt_min_bytes();
  char* tmp = stream ? static_cast<char*>(st.stream_scratch.get(64 << 10)) : nullptr;
  for (int64_t x = x0; x < x1; x += blk) {
    const int64_t m = std::min(blk, x1 - x);
    const int64_t at = x * int64_t(isz);
    for (int j = 0; j < st.W; ++j) st.ptrs[j] = st.bases[j] + at;
    char* to = stream ? tmp : dst + at;
    reduce_kernel(dt, op, st.W, st.ptrs.data(), to, size_t(m));
    if (stream) copy_bytes_stream(dst + at, tmp, size_t(m) * isz);
    if (also && also != dst) copy_bytes(also + at, to, size_t(m) * isz);
  }
}

// One-shot, push: my input goes into every peer's slot; everyone reduces locally.
CollTask all_reduce_push(CollState& st, Tensor in, Tensor out, ReduceOp op, CollectiveResult& r) {
  const char* what = "all_reduce (one-shot push)";
  const size_t bytes = in.nbytes();
  Desc d = st.begin(Kind::all_reduce, Proto::push, in.dtype(), int(op), -1, in.numel(), 0);
  const void* mine = in.data_ptr();
  if (!in.is_contiguous()) {
    void* s = st.input_scratch.get(bytes);
    pack(in, s);
    count_staged(r, bytes);
    mine = s;
  }
  co_await st.push_exchange(d, [&](int) { return Payload(mine, bytes); }, what);
  for (int j = 0; j < st.W; ++j) st.ptrs[j] = j == st.me ? mine : st.slot(j);
  const bool direct = out.is_contiguous();
  void* dst = direct ? out.data_ptr() : st.output_scratch.get(bytes);
  reduce_kernel(in.dtype(), op, st.W, st.ptrs.data(), dst, size_t(in.numel()));
  if (!direct) {
    unpack(dst, out);
    count_staged(r, bytes);
  }
}

// One-shot, pull: everyone reads every peer's input in place and reduces.
CollTask all_reduce_pull(CollState& st, Tensor in, Tensor out, bool inplace, ReduceOp op,
                         CollectiveResult& r) {
  const char* what = "all_reduce (one-shot pull)";
  const size_t bytes = in.nbytes();
  Desc d = st.begin(Kind::all_reduce, Proto::pull, in.dtype(), int(op), -1, in.numel(), 0);
  const int64_t off = st.heap_offset(in);
  if (off >= 0) {
    d.src_off = uint64_t(off);
  } else {
    d.flags |= kSrcInWs;
    d.ws_need = bytes;
  }
  co_await st.pull_begin(d, nullptr, 0, [&] {
    pack(in, st.ws_local());
    count_staged(r, bytes);
  }, what);
  for (int j = 0; j < st.W; ++j) st.bases[j] = st.peer_src(j);
  // In place on a buffer peers read: reduce aside, copy back after the exit sync.
  const bool aside = (inplace && off >= 0) || !out.is_contiguous();
  char* dst = static_cast<char*>(aside ? st.output_scratch.get(bytes) : out.data_ptr());
  reduce_range(st, in.dtype(), op, 0, in.numel(), in.itemsize(), dst, nullptr, !aside);
  co_await st.pull_end(what);
  if (aside) {
    unpack(dst, out);
    if (!out.is_contiguous()) count_staged(r, bytes);
  }
}

// Two-shot: rank r reduces chunk r of every input. When every rank's output is
// symmetric, rank r writes the result into chunk r of every output itself (2
// syncs); otherwise into its reduced buffer R (peer-readable), and after a
// sync everyone copies chunk p from rank p's R (3 syncs).
CollTask all_reduce_two_shot(CollState& st, Tensor in, Tensor out, bool inplace, ReduceOp op,
                             CollectiveResult& r) {
  const char* what = "all_reduce (two-shot)";
  const size_t isz = in.itemsize(), bytes = in.nbytes();
  const int64_t n = in.numel();
  const int W = st.W, me = st.me;
  Desc d = st.begin(Kind::all_reduce, Proto::two_shot, in.dtype(), int(op), -1, n, 0);
  const int64_t in_off = st.heap_offset(in);
  if (in_off >= 0) {
    d.src_off = uint64_t(in_off);
  } else {
    d.flags |= kSrcInWs;
    d.ws_need = bytes;
  }
  // Where my reduced chunk goes. Chunk `me` of my source is read by me only,
  // so the source itself may hold it (in place, or when staged anyway).
  const int64_t out_off = inplace ? -1 : st.heap_offset(out);
  if (inplace || (out_off < 0 && (d.flags & kSrcInWs))) {
    d.red_off = d.src_off;
    if (d.flags & kSrcInWs) d.flags |= kRedInWs;
  } else if (out_off >= 0) {
    d.red_off = uint64_t(out_off);
  } else {
    d.flags |= kRedInWs;
    d.red_off = 0;
    d.ws_need = bytes;
  }
  // Peers may write my result straight into my output when it is symmetric.
  const int64_t final_off = inplace ? in_off : out_off;
  if (final_off >= 0) {
    d.flags |= kOutWritable;
    d.out_off = uint64_t(final_off);
  }
  co_await st.pull_begin(d, nullptr, 0, [&] {
    pack(in, st.ws_local());
    count_staged(r, bytes);
  }, what);

  const int64_t b = chunk_begin(n, W, me, isz), e = chunk_begin(n, W, me + 1, isz);
  bool all_writable = true;
  for (int j = 0; j < W; ++j) all_writable = all_writable && (st.peer_desc(j).flags & kOutWritable);
  if (all_writable) {
    // Fused: reduce my chunk block by block and write each block into every
    // rank's output while it is hot. The peers' lines were just read, so the
    // remote stores need no data transfer, and there is no middle sync.
    // Disjoint: rank p only reads and writes chunk p of every buffer.
    char* mine = static_cast<char*>((inplace ? in : out).data_ptr());
    const int64_t blk = int64_t((64 << 10) / isz);
    for (int64_t x = b; x < e; x += blk) {
      const int64_t m = std::min(blk, e - x);
      const int64_t at = x * int64_t(isz);
      for (int j = 0; j < W; ++j) st.ptrs[j] = st.peer_src(j) + at;
      reduce_kernel(in.dtype(), op, W, st.ptrs.data(), mine + at, size_t(m));
      for (int i = 1; i < W; ++i) copy_bytes(st.peer_out((me + i) % W) + at, mine + at, size_t(m) * isz);
    }
    co_await st.pull_end(what);
    co_return;
  }

  // Reduce-scatter: my chunk, from every rank's source, in rank order, into my
  // output and (when that is not where peers read it) into my reduced buffer,
  // block by block so that the second copy comes from the cache.
  const Tensor& o = inplace ? in : out;
  const bool direct = o.is_contiguous();
  char* dst = direct ? static_cast<char*>(o.data_ptr()) : static_cast<char*>(st.output_scratch.get(bytes));
  char* my_red = const_cast<char*>(st.peer_red(me));
  for (int j = 0; j < W; ++j) st.bases[j] = st.peer_src(j);
  reduce_range(st, in.dtype(), op, b, e, isz, dst, my_red, direct);
  if (my_red != dst) count_staged(r, size_t(e - b) * isz);  // the copy peers read
  st.signal_all(kChPhase);
  co_await st.wait_all(kChPhase, "all_reduce (two-shot) reduce-scatter done");

  // All-gather: chunk p from rank p's reduced buffer.
  for (int i = 1; i < W; ++i) {
    const int p = (me + i) % W;
    const int64_t pb = chunk_begin(n, W, p, isz), pe = chunk_begin(n, W, p + 1, isz);
    if (pe > pb) copy_out(dst + pb * int64_t(isz), st.peer_red(p) + pb * int64_t(isz), size_t(pe - pb) * isz);
  }
  co_await st.pull_end(what);
  if (!direct) {
    unpack(dst, o);
    count_staged(r, bytes);
  }
}

std::shared_ptr<CollWork> start_all_reduce(ProcessGroup& g, const Tensor& in, const Tensor& out,
                                           bool inplace, ReduceOp op, AllReduceAlgo algo) {
  const char* what = inplace ? "all_reduce_" : "all_reduce";
  check_data(in, what, inplace ? "t" : "in");
  check_data(out, what, "out");
  check_reducible(in.dtype(), op, what);
  if (!inplace) {
    SF_CHECK(out.dtype() == in.dtype() && out.numel() == in.numel(),
             "{}: expected `out` of in's type ({} elements of {}), got {}", what, in.numel(),
             dtype_name(in.dtype()), out.type_string());
    if (same_view(in, out)) inplace = true;
    else SF_CHECK(!overlaps(in, out), "{}: `out` ({}) overlaps `in` ({}) without being the same "
                  "view; use all_reduce_ for in place", what, out.type_string(), in.type_string());
  }
  if (g.spans_nodes()) {
    log_algorithm_once(g, what, in.dtype(), in.numel(), "hierarchical");
    return run_now(g, what, [&] { return hier_all_reduce(g, in, out, op); });
  }
  CollState& st = coll_state(g);
  const AllReduceAlgo chosen = algo == AllReduceAlgo::automatic || algo == AllReduceAlgo::hierarchical
                                   ? choose_all_reduce_algo(g, in.nbytes())
                                   : algo;
  const bool push = chosen == AllReduceAlgo::one_shot && in.nbytes() <= st.push_max();
  log_algorithm_once(g, what, in.dtype(), in.numel(),
                     chosen == AllReduceAlgo::two_shot ? "two_shot" : push ? "one_shot (push)" : "one_shot (pull)");
  return start(g, st, what, [&](CollWork& w) {
    w.result.algo = chosen;
    if (chosen == AllReduceAlgo::one_shot) {
      if (in.nbytes() <= st.push_max()) return all_reduce_push(st, in, out, op, w.result);
      return all_reduce_pull(st, in, out, inplace, op, w.result);
    }
    return all_reduce_two_shot(st, in, out, inplace, op, w.result);
  });
}

}  // namespace

const AlgorithmThresholds& thresholds() { return thresholds_mut(); }
void set_thresholds(const AlgorithmThresholds& t) { thresholds_mut() = t; }

AllReduceAlgo choose_all_reduce_algo(const ProcessGroup& g, size_t bytes) {
  if (g.spans_nodes()) return AllReduceAlgo::hierarchical;
  if (g.size() <= 1 || bytes <= thresholds().one_shot_max_bytes) return AllReduceAlgo::one_shot;
  return AllReduceAlgo::two_shot;
}

CollectiveResult all_reduce_(ProcessGroup& g, const Tensor& t, ReduceOp op, AllReduceAlgo algo) {
  return finish({g, LinkPattern::all_reduce, t.nbytes()},
                [&] { return start_all_reduce(g, t, t, true, op, algo); });
}

CollectiveResult all_reduce(ProcessGroup& g, const Tensor& out, const Tensor& in, ReduceOp op,
                            AllReduceAlgo algo) {
  return finish({g, LinkPattern::all_reduce, in.nbytes()},
                [&] { return start_all_reduce(g, in, out, false, op, algo); });
}

Work iall_reduce_(ProcessGroup& g, const Tensor& t, ReduceOp op, AllReduceAlgo algo) {
  return started({g, LinkPattern::all_reduce, t.nbytes()},
                 [&] { return start_all_reduce(g, t, t, true, op, algo); });
}

Work iall_reduce(ProcessGroup& g, const Tensor& out, const Tensor& in, ReduceOp op,
                 AllReduceAlgo algo) {
  return started({g, LinkPattern::all_reduce, in.nbytes()},
                 [&] { return start_all_reduce(g, in, out, false, op, algo); });
}

}  // namespace symmflow::dist
