// all_gather, reduce_scatter, all_to_all_single, broadcast_, tile_reduce over
// the push (small) and pull (large, zero copy) protocols of coll_state.h.
#include <algorithm>
#include <numeric>

#include "symmflow/core/error.h"
#include "symmflow/core/overlap.h"
#include "symmflow/runtime/collectives/coll_queue.h"
#include "symmflow/runtime/debug_log.h"
#include "symmflow/runtime/collectives/reduce_kernels.h"

namespace symmflow::dist {

using namespace detail;

namespace {

// SYMMFLOW_DEBUG=INFO: which protocol a call of this shape runs (first call only).
void log_protocol(ProcessGroup& g, const char* what, const Tensor& t, size_t per_peer_bytes) {
  if (!logging::info_enabled()) [[likely]] return;
  if (g.spans_nodes()) return log_algorithm_once(g, what, t.dtype(), t.numel(), "hierarchical");
  const bool push = per_peer_bytes <= coll_state(g).push_max();
  log_algorithm_once(g, what, t.dtype(), t.numel(), push ? "push" : "pull");
}

// My contribution as contiguous bytes: the tensor itself, or packed aside (counted).
const char* contiguous_bytes(const Tensor& t, Scratch& s, CollectiveResult& r) {
  if (t.is_contiguous()) return static_cast<const char*>(t.data_ptr());
  void* p = s.get(t.nbytes());
  pack(t, p);
  count_staged(r, t.nbytes());
  return static_cast<const char*>(p);
}

// Where results are written: the tensor if contiguous, else scratch to unpack.
char* output_bytes(const Tensor& t, Scratch& s) {
  return t.is_contiguous() ? static_cast<char*>(t.data_ptr()) : static_cast<char*>(s.get(t.nbytes()));
}
void finish_output(const Tensor& t, const char* bytes, CollectiveResult& r) {
  if (t.is_contiguous()) return;
  unpack(bytes, t);
  count_staged(r, t.nbytes());
}

// Announces my input for a pull: in place when peer-readable, else staged.
CollTask pull_source(CollState& st, Desc& d, const Tensor& in, const int64_t* extra, int nextra,
                     CollectiveResult& r, std::string_view what) {
  const int64_t off = st.heap_offset(in);
  if (off >= 0) {
    d.src_off = uint64_t(off);
  } else {
    d.flags |= kSrcInWs;
    d.ws_need = std::max<uint64_t>(d.ws_need, in.nbytes());
  }
  co_await st.pull_begin(d, extra, nextra, [&] {
    pack(in, st.ws_local());
    count_staged(r, in.nbytes());
  }, what);
}

bool same_view_or_disjoint(const Tensor& a, const Tensor& b) {
  if (a.data_ptr() == b.data_ptr() && a.sizes() == b.sizes() && a.strides() == b.strides()) return true;
  return !overlaps(a, b);
}

CollTask all_gather_task(CollState& st, Tensor out, Tensor in, CollectiveResult& r) {
  const char* what = "all_gather";
  const int W = st.W, me = st.me;
  const size_t bytes = in.nbytes();
  char* dst = output_bytes(out, st.output_scratch);
  if (bytes <= st.push_max()) {
    Desc d = st.begin(Kind::all_gather, Proto::push, in.dtype(), -1, -1, in.numel(), 0);
    const char* mine = contiguous_bytes(in, st.input_scratch, r);
    co_await st.push_exchange(d, [&](int) { return Payload(mine, bytes); }, what);
    for (int p = 0; p < W; ++p) {
      const char* src = p == me ? mine : st.slot(p);
      if (src != dst + p * bytes && bytes) copy_bytes(dst + p * bytes, src, bytes);
    }
  } else {
    Desc d = st.begin(Kind::all_gather, Proto::pull, in.dtype(), -1, -1, in.numel(), 0);
    co_await pull_source(st, d, in, nullptr, 0, r, what);
    for (int i = 1; i < W; ++i) {
      const int p = (me + i) % W;
      copy_out(dst + p * bytes, st.peer_src(p), bytes);
    }
    pack(in, dst + me * bytes);  // my own chunk straight from `in` (no-op if in place)
    co_await st.pull_end(what);
  }
  finish_output(out, dst, r);
}

std::shared_ptr<CollWork> start_all_gather(ProcessGroup& g, const Tensor& out, const Tensor& in) {
  const char* what = "all_gather";
  check_data(in, what, "in");
  check_data(out, what, "out");
  const int W = g.size(), me = g.rank();
  SF_CHECK(out.dtype() == in.dtype() && out.numel() == in.numel() * W,
           "all_gather: expected `out` with {} x {} = {} elements of {}, got {}", W, in.numel(),
           in.numel() * W, dtype_name(in.dtype()), out.type_string());
  const size_t bytes = in.nbytes();
  // `in` may be out's own chunk (an in-place all-gather); any other overlap is an error.
  const bool in_is_my_chunk = out.is_contiguous() && in.is_contiguous() &&
      in.data_ptr() == static_cast<char*>(out.data_ptr()) + me * bytes;
  SF_CHECK(in_is_my_chunk || !overlaps(in, out),
           "all_gather: `out` {} overlaps `in` {} (only in == out's chunk {} is allowed)",
           out.type_string(), in.type_string(), me);
  log_protocol(g, what, in, in.nbytes());
  if (g.spans_nodes()) return run_now(g, what, [&] { return hier_all_gather(g, in, out); });
  CollState& st = coll_state(g);
  return start(g, st, what, [&](CollWork& w) { return all_gather_task(st, out, in, w.result); });
}

CollTask reduce_scatter_task(CollState& st, Tensor out, Tensor in, ReduceOp op, CollectiveResult& r) {
  const char* what = "reduce_scatter";
  const int W = st.W, me = st.me;
  const int64_t m = out.numel();
  const size_t cbytes = out.nbytes();
  char* dst = output_bytes(out, st.output_scratch);
  if (cbytes <= st.push_max()) {
    Desc d = st.begin(Kind::reduce_scatter, Proto::push, in.dtype(), int(op), -1, in.numel(), 0);
    const char* mine = contiguous_bytes(in, st.input_scratch, r);
    co_await st.push_exchange(d, [&](int p) { return Payload(mine + p * cbytes, cbytes); }, what);
    for (int j = 0; j < W; ++j) st.ptrs[j] = j == me ? mine + me * cbytes : st.slot(j);
  } else {
    Desc d = st.begin(Kind::reduce_scatter, Proto::pull, in.dtype(), int(op), -1, in.numel(), 0);
    co_await pull_source(st, d, in, nullptr, 0, r, what);
    for (int j = 0; j < W; ++j) st.ptrs[j] = st.peer_src(j) + me * cbytes;
  }
  reduce_kernel(in.dtype(), op, W, st.ptrs.data(), dst, size_t(m));
  if (cbytes > st.push_max()) co_await st.pull_end(what);
  finish_output(out, dst, r);
}

std::shared_ptr<CollWork> start_reduce_scatter(ProcessGroup& g, const Tensor& out, const Tensor& in,
                                               ReduceOp op) {
  const char* what = "reduce_scatter";
  check_data(in, what, "in");
  check_data(out, what, "out");
  check_reducible(in.dtype(), op, what);
  const int W = g.size();
  SF_CHECK(in.numel() % W == 0, "reduce_scatter: expected `in` to hold {} equal chunks, but {} has "
           "{} elements", W, in.type_string(), in.numel());
  SF_CHECK(out.dtype() == in.dtype() && out.numel() == in.numel() / W,
           "reduce_scatter: expected `out` with {} / {} = {} elements of {}, got {}", in.numel(), W,
           in.numel() / W, dtype_name(in.dtype()), out.type_string());
  SF_CHECK(!overlaps(in, out), "reduce_scatter: `out` {} overlaps `in` {}", out.type_string(),
           in.type_string());
  log_protocol(g, what, in, out.nbytes());
  if (g.spans_nodes()) return run_now(g, what, [&] { return hier_reduce_scatter(g, in, out, op); });
  CollState& st = coll_state(g);
  return start(g, st, what, [&](CollWork& w) { return reduce_scatter_task(st, out, in, op, w.result); });
}

// Rows (dim-0 slices) of `in` go to rank j (ins[j] of them); `out` receives
// outs[p] rows from rank p, in rank order.
CollTask all_to_all_task(CollState& st, Tensor out, Tensor in, std::vector<int64_t> outs,
                         std::vector<int64_t> ins, int64_t row, CollectiveResult& r) {
  const char* what = "all_to_all_single";
  const int W = st.W, me = st.me;
  const size_t row_bytes = size_t(row) * in.itemsize();
  // Always pull: the per-peer sizes differ between ranks, so no rank could pick
  // a size-dependent protocol that all ranks agree on without an exchange first.
  Desc d = st.begin(Kind::all_to_all, Proto::pull, in.dtype(), -1, -1, row, 0);
  co_await pull_source(st, d, in, ins.data(), W, r, what);
  char* dst = output_bytes(out, st.output_scratch);
  int64_t out_row = 0;
  for (int p = 0; p < W; ++p) {
    const int64_t* ps = st.peer_extra(p);
    SF_CHECK(ps[me] == outs[p], "all_to_all_single: rank {} sends {} rows to rank {}, which expects "
             "{} (its out_splits[{}])", p, ps[me], me, outs[p], p);
    int64_t from_row = 0;
    for (int j = 0; j < me; ++j) from_row += ps[j];
    if (outs[p]) copy_bytes(dst + out_row * row_bytes, st.peer_src(p) + from_row * row_bytes,
                             size_t(outs[p]) * row_bytes);
    out_row += outs[p];
  }
  co_await st.pull_end(what);
  finish_output(out, dst, r);
}

std::shared_ptr<CollWork> start_all_to_all_single(ProcessGroup& g, const Tensor& out, const Tensor& in,
                                                  std::span<const int64_t> out_splits,
                                                  std::span<const int64_t> in_splits) {
  const char* what = "all_to_all_single";
  check_data(in, what, "in");
  check_data(out, what, "out");
  const int W = g.size();
  SF_CHECK(in.dim() >= 1 && out.dim() >= 1 && in.dtype() == out.dtype(),
           "all_to_all_single: expected `in` and `out` of the same dtype with at least one "
           "dimension, got {} and {}", in.type_string(), out.type_string());
  auto row_elems = [](const Tensor& t) {
    int64_t e = 1;
    for (int64_t d = 1; d < t.dim(); ++d) e *= t.size(d);
    return e;
  };
  const int64_t row = row_elems(in);
  SF_CHECK(row_elems(out) == row, "all_to_all_single: rows of `in` {} and `out` {} differ in size",
           in.type_string(), out.type_string());
  auto resolve = [&](std::span<const int64_t> s, const Tensor& t, const char* name) {
    std::vector<int64_t> v;
    if (s.empty()) {
      SF_CHECK(t.size(0) % W == 0, "all_to_all_single: empty {} means equal splits, but dim 0 of "
               "{} is not divisible by {} ranks", name, t.type_string(), W);
      v.assign(size_t(W), t.size(0) / W);
    } else {
      SF_CHECK(int(s.size()) == W, "all_to_all_single: expected {} with {} entries, got {}", name, W,
               s.size());
      v.assign(s.begin(), s.end());
      int64_t sum = 0;
      for (int64_t x : v) {
        SF_CHECK(x >= 0, "all_to_all_single: negative entry {} in {}", x, name);
        sum += x;
      }
      SF_CHECK(sum == t.size(0), "all_to_all_single: {} sums to {} rows but dim 0 of {} is {}",
               name, sum, t.type_string(), t.size(0));
    }
    return v;
  };
  const std::vector<int64_t> ins = resolve(in_splits, in, "in_splits");
  const std::vector<int64_t> outs = resolve(out_splits, out, "out_splits");
  log_algorithm_once(g, what, in.dtype(), in.numel(), g.spans_nodes() ? "hierarchical" : "pull");
  if (g.spans_nodes()) return run_now(g, what, [&] { return hier_all_to_all(g, in, out, outs, ins); });
  CollState& st = coll_state(g);
  return start(g, st, what, [&](CollWork& w) {
    return all_to_all_task(st, out, in, outs, ins, row, w.result);
  });
}

CollTask broadcast_task(CollState& st, Tensor t, int src, CollectiveResult& r) {
  const char* what = "broadcast_";
  const int me = st.me;
  const size_t bytes = t.nbytes();
  if (bytes <= st.push_max()) {
    Desc d = st.begin(Kind::broadcast, Proto::push, t.dtype(), -1, src, t.numel(), 0);
    const char* mine = me == src ? contiguous_bytes(t, st.input_scratch, r) : nullptr;
    co_await st.push_exchange(d, [&](int) { return me == src ? Payload(mine, bytes) : Payload(nullptr, 0); },
                              what);
    if (me != src) unpack(st.slot(src), t);
  } else {
    Desc d = st.begin(Kind::broadcast, Proto::pull, t.dtype(), -1, src, t.numel(), 0);
    if (me == src) {
      co_await pull_source(st, d, t, nullptr, 0, r, what);
    } else {
      co_await st.pull_begin(d, nullptr, 0, [] {}, what);
      unpack(st.peer_src(src), t);
    }
    co_await st.pull_end(what);
  }
}

std::shared_ptr<CollWork> start_broadcast(ProcessGroup& g, const Tensor& t, int src) {
  const char* what = "broadcast_";
  check_data(t, what, "t");
  const int W = g.size();
  SF_CHECK(src >= 0 && src < W, "broadcast_: src {} is not a rank of group '{}' (size {})", src,
           g.name(), W);
  log_protocol(g, what, t, t.nbytes());
  if (g.spans_nodes()) return run_now(g, what, [&] { return hier_broadcast(g, t, src); });
  CollState& st = coll_state(g);
  return start(g, st, what, [&](CollWork& w) { return broadcast_task(st, t, src, w.result); });
}

// A tile as rows of contiguous elements: 2-D with unit inner stride, or any
// contiguous tensor (one row unless 2-D). `direct` says whether it can be
// read/written in place row by row.
struct Rows {
  int64_t rows = 1, cols = 0, pitch = 0;
  bool direct = false;
};
Rows rows_of(const Tensor& t) {
  Rows g;
  g.rows = t.dim() == 2 ? t.size(0) : 1;
  g.cols = g.rows ? t.numel() / g.rows : 0;
  g.direct = rows_in_place(t.sizes(), t.strides());
  // In place: a 2-D tile's rows lie stride(0) apart; otherwise (one row, or
  // packed) they follow each other.
  g.pitch = g.direct && t.dim() == 2 && g.rows > 1 ? t.stride(0) : g.cols;
  return g;
}

CollTask tile_reduce_task(CollState& st, Tensor in_tile, Tensor out_tile, Rows in, Rows out, int root,
                          ReduceOp op, CollectiveResult& r) {
  const char* what = "tile_reduce";
  const int W = st.W, me = st.me;
  const size_t isz = in_tile.itemsize(), bytes = in_tile.nbytes();
  // My own tile, as rows (in place, or packed aside).
  auto own_rows = [&]() -> std::pair<const char*, int64_t> {
    if (in.direct) return {static_cast<const char*>(in_tile.data_ptr()), in.pitch};
    void* p = st.input_scratch.get(bytes);
    pack(in_tile, p);
    count_staged(r, bytes);
    return {static_cast<const char*>(p), in.cols};
  };
  // Root: fold rows in rank order; src(j) gives rank j's tile base and pitch.
  auto reduce_rows = [&](auto&& src) {
    const bool direct = out.direct;
    char* dst = direct ? static_cast<char*>(out_tile.data_ptr()) : static_cast<char*>(st.output_scratch.get(bytes));
    const int64_t dpitch = direct ? out.pitch : in.cols;
    std::vector<std::pair<const char*, int64_t>> base(static_cast<size_t>(W));
    for (int j = 0; j < W; ++j) base[j] = src(j);
    for (int64_t i = 0; i < in.rows; ++i) {
      for (int j = 0; j < W; ++j) st.ptrs[j] = base[j].first + i * base[j].second * int64_t(isz);
      reduce_kernel(in_tile.dtype(), op, W, st.ptrs.data(), dst + i * dpitch * int64_t(isz), size_t(in.cols));
    }
    if (!direct) {
      unpack(dst, out_tile);
      count_staged(r, bytes);
    }
  };
  if (bytes <= st.push_max()) {
    Desc d = st.begin(Kind::tile_reduce, Proto::push, in_tile.dtype(), int(op), root, in_tile.numel(), in.rows);
    // Not the root: my tile goes to the root's slot, a strided one packed
    // straight into it (one move, nothing staged).
    const bool whole = in.direct && in.pitch == in.cols;
    co_await st.push_exchange(d, [&](int p) {
      if (p != root || me == root) return Payload();
      return whole ? Payload(in_tile.data_ptr(), bytes) : Payload::packed(in_tile);
    }, what);
    if (me == root) {
      auto own = own_rows();
      reduce_rows([&](int j) { return j == me ? own : std::pair<const char*, int64_t>(st.slot(j), in.cols); });
    }
  } else {
    Desc d = st.begin(Kind::tile_reduce, Proto::pull, in_tile.dtype(), int(op), root, in_tile.numel(), in.rows);
    if (me != root) {
      const int64_t off = in.direct ? st.heap_offset(in_tile, true) : -1;
      if (off >= 0) {
        d.src_off = uint64_t(off);
        d.pitch = in.pitch;
      } else {
        d.flags |= kSrcInWs;
        d.ws_need = bytes;
        d.pitch = in.cols;
      }
    }
    co_await st.pull_begin(d, nullptr, 0, [&] {
      pack(in_tile, st.ws_local());
      count_staged(r, bytes);
    }, what);
    if (me == root) {
      auto own = own_rows();
      reduce_rows([&](int j) {
        return j == me ? own : std::pair<const char*, int64_t>(st.peer_src(j), st.peer_desc(j).pitch);
      });
    }
    co_await st.pull_end(what);
  }
}

std::shared_ptr<CollWork> start_tile_reduce(ProcessGroup& g, const Tensor& in_tile,
                                            const Tensor& out_tile, int root, ReduceOp op) {
  const char* what = "tile_reduce";
  check_data(in_tile, what, "in_tile");
  check_reducible(in_tile.dtype(), op, what);
  const int W = g.size(), me = g.rank();
  SF_CHECK(root >= 0 && root < W, "tile_reduce: root {} is not a rank of group '{}' (size {})", root,
           g.name(), W);
  const Rows in = rows_of(in_tile);
  Rows out;
  if (me == root) {
    check_data(out_tile, what, "out_tile");
    SF_CHECK(out_tile.dtype() == in_tile.dtype() && out_tile.sizes() == in_tile.sizes(),
             "tile_reduce: expected `out_tile` of in_tile's type {}, got {}", in_tile.type_string(),
             out_tile.type_string());
    SF_CHECK(same_view_or_disjoint(in_tile, out_tile), "tile_reduce: `out_tile` {} overlaps "
             "`in_tile` {} without being the same view", out_tile.type_string(), in_tile.type_string());
    out = rows_of(out_tile);
  }
  log_protocol(g, what, in_tile, in_tile.nbytes());
  if (g.spans_nodes()) return run_now(g, what, [&] { return hier_tile_reduce(g, in_tile, out_tile, root, op); });
  CollState& st = coll_state(g);
  return start(g, st, what, [&](CollWork& w) {
    return tile_reduce_task(st, in_tile, out_tile, in, out, root, op, w.result);
  });
}

}  // namespace

// Link bytes (sim_link.h): all_gather, reduce_scatter and all_to_all_single
// count the larger tensor (gathered / full).
CollectiveResult all_gather(ProcessGroup& g, const Tensor& out, const Tensor& in) {
  return finish({g, LinkPattern::ring_share, out.nbytes()}, [&] { return start_all_gather(g, out, in); });
}
Work iall_gather(ProcessGroup& g, const Tensor& out, const Tensor& in) {
  return started({g, LinkPattern::ring_share, out.nbytes()}, [&] { return start_all_gather(g, out, in); });
}

CollectiveResult reduce_scatter(ProcessGroup& g, const Tensor& out, const Tensor& in, ReduceOp op) {
  return finish({g, LinkPattern::ring_share, in.nbytes()},
                [&] { return start_reduce_scatter(g, out, in, op); });
}
Work ireduce_scatter(ProcessGroup& g, const Tensor& out, const Tensor& in, ReduceOp op) {
  return started({g, LinkPattern::ring_share, in.nbytes()},
                 [&] { return start_reduce_scatter(g, out, in, op); });
}

CollectiveResult all_to_all_single(ProcessGroup& g, const Tensor& out, const Tensor& in,
                                   std::span<const int64_t> out_splits,
                                   std::span<const int64_t> in_splits) {
  return finish({g, LinkPattern::ring_share, std::max(in.nbytes(), out.nbytes())},
                [&] { return start_all_to_all_single(g, out, in, out_splits, in_splits); });
}
Work iall_to_all_single(ProcessGroup& g, const Tensor& out, const Tensor& in,
                        std::span<const int64_t> out_splits, std::span<const int64_t> in_splits) {
  return started({g, LinkPattern::ring_share, std::max(in.nbytes(), out.nbytes())},
                 [&] { return start_all_to_all_single(g, out, in, out_splits, in_splits); });
}

CollectiveResult broadcast_(ProcessGroup& g, const Tensor& t, int src) {
  return finish({g, LinkPattern::whole, t.nbytes()}, [&] { return start_broadcast(g, t, src); });
}
Work ibroadcast_(ProcessGroup& g, const Tensor& t, int src) {
  return started({g, LinkPattern::whole, t.nbytes()}, [&] { return start_broadcast(g, t, src); });
}

CollectiveResult tile_reduce(ProcessGroup& g, const Tensor& in_tile, const Tensor& out_tile, int root,
                             ReduceOp op) {
  return finish({g, LinkPattern::whole, in_tile.nbytes()},
                [&] { return start_tile_reduce(g, in_tile, out_tile, root, op); });
}
Work itile_reduce(ProcessGroup& g, const Tensor& in_tile, const Tensor& out_tile, int root,
                  ReduceOp op) {
  return started({g, LinkPattern::whole, in_tile.nbytes()},
                 [&] { return start_tile_reduce(g, in_tile, out_tile, root, op); });
}

}  // namespace symmflow::dist
