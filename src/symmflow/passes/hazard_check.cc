// The implementation of hazard_check.h, one unit although it passes 500 lines:
// the checks share one simulation state (positions, waits, byte ownership per
// arena, the places of values), and each check is a member reading it.
#include "symmflow/passes/hazard_check.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "symmflow/core/overlap.h"
#include "symmflow/core/strided.h"
#include "symmflow/ir/alias.h"
#include "symmflow/ir/exec_plan.h"
#include "symmflow/passes/memory_plan.h"
#include "symmflow/passes/symm_placement.h"

namespace symmflow::passes {

using ir::Node;
using ir::Value;
using Kind = HazardError::Kind;

const char* to_string(Kind k) {
  switch (k) {
    case Kind::use_before_def:
      return "use_before_def";
    case Kind::read_before_ready:
      return "read_before_ready";
    case Kind::overwrite_in_flight:
      return "overwrite_in_flight";
    case Kind::overlapping_buffers:
      return "overlapping_buffers";
    case Kind::buffer_too_small:
      return "buffer_too_small";
    case Kind::group_order:
      return "group_order";
    case Kind::never_waited:
      return "never_waited";
    case Kind::plan_mismatch:
      return "plan_mismatch";
    case Kind::wait_before_start:
      return "wait_before_start";
  }
  return "?";
}

namespace {

// --- which ops communicate, and how ---------------------------------------------

bool is_wait(const Node& n) { return n.schema().ns == "c10d" && n.schema().name == "wait_tensor"; }

bool is_p2p(const Node& n) {
  const auto& s = n.schema();
  return s.ns == "c10d" && (s.name == "isend" || s.name == "irecv_" || s.name == "batch_isend_irecv");
}

// Async when waited (the contract's list; every other c10d op but the wait).
bool is_collective(const Node& n) { return n.schema().ns == "c10d" && !is_wait(n) && !is_p2p(n); }

// Ops every rank of a group must issue in the same order.
bool is_comm(const Node& n) {
  const auto& ns = n.schema().ns;
  if (is_wait(n)) return false;
  return ns == "c10d" || ns == "symm_mem" || (!is_builtin_op(n) && !group_of(n).empty());
}

// One asynchronous operation: a P2P entry, or one result of a waited collective.
struct Entry {
  const Value* handle;  // the result its wait takes
  std::vector<const Value*> reads, writes;
  std::string what;  // "irecv into %y0", for messages
};

std::vector<const Value*> tensor_values(const ir::Arg& a) {
  std::vector<const Value*> out;
  a.for_each_value([&](const Value* v) {
    if (v->is_tensor()) out.push_back(v);
  });
  return out;
}

std::vector<Entry> p2p_entries(const ir::Graph& g, const Node& n) {
  const std::string& name = n.schema().name;
  if (name == "isend") return {{n.output(0), tensor_values(n.arg(0)), {}, "isend of %" + n.arg(0).value->name()}};
  if (name == "irecv_") return {{n.output(0), {}, {n.output(0)}, "irecv into %" + n.arg(0).value->name()}};
  std::vector<Entry> out;
  auto kinds = g.materialize(n.arg(0), {}).to_string_list();
  const auto& tensors = n.arg(3).elems;
  for (size_t i = 0; i < kinds.size() && i < n.outputs().size() && i < tensors.size(); ++i) {
    const Value* t = tensors[i].value;
    if (kinds[i] == "isend")
      out.push_back({n.output(i), {t}, {}, fmt::format("entry {}: isend of %{}", i, t->name())});
    else
      out.push_back({n.output(i), {}, {n.output(i)}, fmt::format("entry {}: irecv into %{}", i, t->name())});
  }
  return out;
}

// A collective's result i reads the i-th element of a list input (coalesced ops),
// or every tensor input.
std::vector<Entry> collective_entries(const Node& n) {
  const size_t outs = n.outputs().size();
  std::vector<Entry> out;
  for (size_t i = 0; i < outs; ++i) {
    Entry e{n.output(i), {}, {n.output(i)}, outs > 1 ? fmt::format("result {}", i) : ""};
    for (const auto& a : n.args()) {
      if (a.kind == ir::Arg::Kind::List && a.elems.size() == outs && outs > 1) {
        auto v = tensor_values(a.elems[i]);
        e.reads.insert(e.reads.end(), v.begin(), v.end());
      } else {
        auto v = tensor_values(a);
        e.reads.insert(e.reads.end(), v.begin(), v.end());
      }
    }
    out.push_back(std::move(e));
  }
  return out;
}

// --- bytes --------------------------------------------------------------------------

struct Interval {
  int64_t lo, hi;  // [lo, hi)
};
using Intervals = std::vector<Interval>;  // sorted, disjoint

constexpr int64_t kRegular = -1, kSymmetric = -2;  // spaces; a root's own storage is its value id
constexpr int64_t kMaxIntervals = 1024;            // beyond: the view's hull (conservative)

// The bytes of a view within its storage, exactly (every run of adjacent elements)
// up to kMaxIntervals, else the hull: a column and its neighbour stay disjoint.
Intervals view_bytes(const ir::TensorType& t) {
  const int64_t esize = int64_t(element_size(t.dtype));
  if (t.numel() == 0) return {};
  const Shape strides = t.full_strides();
  const int64_t base = t.offset * esize;
  std::array<std::vector<int64_t>, 1> bstrides;
  for (int64_t s : strides) bstrides[0].push_back(s * esize);
  const StridedLoop<1> loop = coalesce<1>(t.sizes, bstrides);
  const int64_t inner = loop.sizes.back(), step = loop.strides[0].back();
  const bool dense_runs = inner == 1 || step == esize;
  const int64_t count = dense_runs ? loop.numel / inner : loop.numel;
  Intervals out;
  if (count > kMaxIntervals) {
    int64_t lo = base, hi = base + esize;
    for (size_t d = 0; d < t.sizes.size(); ++d) {
      const int64_t span = (t.sizes[d] - 1) * strides[d] * esize;
      (span < 0 ? lo : hi) += span;
    }
    return {{lo, hi}};
  }
  for_each_run_range(loop, 0, loop.numel, [&](const std::array<int64_t, 1>& off, const int64_t* s, int64_t n) {
    if (dense_runs) {
      out.push_back({base + off[0], base + off[0] + n * esize});
    } else {
      for (int64_t k = 0; k < n; ++k) out.push_back({base + off[0] + k * s[0], base + off[0] + k * s[0] + esize});
    }
  });
  std::sort(out.begin(), out.end(), [](const Interval& a, const Interval& b) { return a.lo < b.lo; });
  Intervals merged;
  for (const Interval& i : out) {
    if (!merged.empty() && i.lo <= merged.back().hi)
      merged.back().hi = std::max(merged.back().hi, i.hi);
    else
      merged.push_back(i);
  }
  return merged;
}

std::optional<Interval> first_common(const Intervals& a, const Intervals& b) {
  for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    const int64_t lo = std::max(a[i].lo, b[j].lo), hi = std::min(a[i].hi, b[j].hi);
    if (lo < hi) return Interval{lo, hi};
    (a[i].hi < b[j].hi ? i : j)++;
  }
  return std::nullopt;
}

// Where one value's bytes are.
struct Place {
  int64_t space = 0;
  const Value* root = nullptr;
  Intervals bytes;  // in the space (arena offsets included)
};

// Which root last wrote each arena byte: segments [lo, hi) -> writer.
struct Owner {
  const Value* root = nullptr;
  const Node* writer = nullptr;  // nullptr: the input's copy at the start
  bool sentinel = false;
};

class ByteOwners {
 public:
  void assign(Interval iv, Owner o) {
    auto it = seg_.lower_bound(iv.lo);
    if (it != seg_.begin()) {
      auto p = std::prev(it);
      if (p->second.first > iv.lo) {  // split the segment that starts before
        auto [hi, owner] = p->second;
        p->second.first = iv.lo;
        if (hi > iv.hi) seg_[iv.hi] = {hi, owner};
      }
    }
    it = seg_.lower_bound(iv.lo);
    while (it != seg_.end() && it->first < iv.hi) {
      auto [hi, owner] = it->second;
      it = seg_.erase(it);
      if (hi > iv.hi) {
        seg_[iv.hi] = {hi, owner};
        break;
      }
    }
    seg_[iv.lo] = {iv.hi, o};
  }
  // The first part of iv another root wrote last.
  std::optional<std::pair<Interval, Owner>> foreign(Interval iv, const Value* root) const {
    auto it = seg_.upper_bound(iv.lo);
    if (it != seg_.begin()) --it;
    for (; it != seg_.end() && it->first < iv.hi; ++it) {
      const auto& [hi, owner] = it->second;
      if (hi > iv.lo && owner.root != root)
        return std::make_pair(Interval{std::max(it->first, iv.lo), std::min(hi, iv.hi)}, owner);
    }
    return std::nullopt;
  }

 private:
  std::map<int64_t, std::pair<int64_t, Owner>> seg_;
};

// --- the checker --------------------------------------------------------------------

class HazardChecker {
 public:
  HazardChecker(const ir::Graph& g, std::span<const Node* const> program_order)
      : g_(g), order_(program_order), nodes_(g.nodes()), roots_(ir::storage_roots(g)) {
    for (size_t p = 0; p < nodes_.size(); ++p) pos_.emplace(nodes_[p], p);
    places_.resize(g.num_values());
  }

  void run() {
    check_group_order();
    check_wait_order();
    check_definitions();
    find_waits();
    check_plan();
    check_slots();
    simulate();
    check_live_overlap();
    check_plan_inputs();
  }

 private:
  struct Access {
    const Value* value;
    Place place;
    bool sentinel = false;
  };
  struct InFlight {
    const Node* node;
    const Entry* entry;
    const Node* wait;
    std::vector<Access> reads, writes;
  };

  [[noreturn]] void fail(Kind k, const Node* n, const Node* other, const std::string& msg) const {
    throw HazardError(k, fmt::format("hazard_check: {}: {}", to_string(k), msg), n, other);
  }

  // "`%s, %r = c10d::batch_isend_irecv(%x, %y)` (ring.sf:3, instruction 0)"
  std::string describe(const Node* n) const {
    if (!n) return "the end of the program";
    std::vector<std::string> outs, args;
    for (const Value* o : n->outputs()) outs.push_back("%" + o->name());
    for (const auto& a : n->args()) a.for_each_value([&](const Value* v) { args.push_back("%" + v->name()); });
    std::string where;
    if (n->loc().line > 0) where = fmt::format("{}:{}, ", g_.file().empty() ? "<input>" : g_.file(), n->loc().line);
    auto it = pos_.find(n);
    where += it == pos_.end() ? "not in the schedule" : fmt::format("instruction {}", it->second);
    return fmt::format("`{}{}({})` ({})", outs.empty() ? "" : fmt::format("{} = ", fmt::join(outs, ", ")), n->op_name(),
                       fmt::join(args, ", "), where);
  }

  // The op in flight, and which of its operations when it has several.
  std::string describe(const InFlight& f) const {
    return f.entry->what.empty() ? describe(f.node) : fmt::format("{} ({})", describe(f.node), f.entry->what);
  }

  std::string describe(const Place& p, Interval iv) const {
    if (p.space >= 0) return fmt::format("bytes [{}, {}) of the storage of %{}", iv.lo, iv.hi, p.root->name());
    return fmt::format("{} arena bytes [{}, {}) (the slot of %{})", p.space == kRegular ? "regular" : "symmetric",
                       iv.lo, iv.hi, p.root->name());
  }

  const Value* root_of(const Value* v) const {
    const Value* r = roots_[size_t(v->id())];
    return r ? r : v;
  }

  const ir::BufferSlot* slot_of(const Value* root) const {
    auto it = g_.plan().slots.find(root->id());
    return it == g_.plan().slots.end() ? nullptr : &it->second;
  }

  const Place& place_of(const Value* v) const {
    auto& cached = places_[size_t(v->id())];
    if (!cached) cached = locate(v);
    return *cached;
  }

  Place locate(const Value* v) const {
    Place p;
    p.root = root_of(v);
    p.bytes = view_bytes(v->type());
    if (const ir::BufferSlot* s = slot_of(p.root)) {
      p.space = s->arena == ir::Arena::regular ? kRegular : kSymmetric;
      for (Interval& iv : p.bytes) iv.lo += s->offset, iv.hi += s->offset;
    } else {
      p.space = p.root->id();
    }
    return p;
  }

  // group_order: per group, the communication ops in program order.
  void check_group_order() const {
    auto by_group = [](auto&& nodes) {
      std::map<std::string, std::vector<const Node*>> out;
      for (const Node* n : nodes)
        if (is_comm(*n)) out[group_of(*n)].push_back(n);
      return out;
    };
    auto want = by_group(order_), got = by_group(nodes_);
    for (const auto& [group, w] : want) got[group];  // groups that lost every op compare too
    for (const auto& [group, gs] : got) {
      const auto& ws = want[group];
      for (size_t i = 0; i < std::max(ws.size(), gs.size()); ++i) {
        const Node* w = i < ws.size() ? ws[i] : nullptr;
        const Node* s = i < gs.size() ? gs[i] : nullptr;
        if (w == s) continue;
        const std::string g = group.empty() ? "(no group)" : "'" + group + "'";
        if (!s)
          fail(Kind::group_order, w, nullptr,
               fmt::format("group {}: communication op #{} in program order, {}, is missing from the schedule", g, i,
                           describe(w)));
        if (!w)
          fail(Kind::group_order, s, nullptr,
               fmt::format("group {}: the schedule's communication op #{}, {}, is not in program order", g, i,
                           describe(s)));
        fail(Kind::group_order, s, w,
             fmt::format("group {}: communication op #{} is {} in the schedule but {} in program order (every rank "
                         "must issue a group's ops in the same order)",
                         g, i, describe(s), describe(w)));
      }
    }
  }

  // wait_before_start: when a wait runs, every communication op before it in
  // eager order has been issued. A collective's wait (one the scheduler added
  // included) stands right after the collective.
  void check_wait_order() const {
    std::unordered_map<const Node*, size_t> program;
    for (size_t p = 0; p < order_.size(); ++p) program.emplace(order_[p], p);
    std::vector<std::pair<size_t, const Node*>> comms;  // (program position, op), in program order
    for (const Node* n : order_)
      if (is_comm(*n)) comms.emplace_back(program.at(n), n);
    std::unordered_set<const Node*> issued;
    size_t next = 0;  // the first op in program order not issued yet
    for (const Node* n : nodes_) {
      if (is_comm(*n)) issued.insert(n);
      while (next < comms.size() && issued.count(comms[next].second)) ++next;
      if (!is_wait(*n) || next == comms.size()) continue;
      // The wait's place in eager order, where the program blocks: its own for
      // a P2P handle, right after the collective for a collective's (which
      // completes at its node in eager, wherever its waits are).
      const Node* start = n->arg(0).value ? n->arg(0).value->producer() : nullptr;
      size_t at = 0;
      if (auto it = program.find(n); it != program.end() && (!start || is_p2p(*start))) {
        at = it->second;
      } else {
        auto s = start ? program.find(start) : program.end();
        if (s == program.end()) continue;
        at = s->second + 1;
      }
      if (comms[next].first < at)
        fail(Kind::wait_before_start, n, comms[next].second,
             fmt::format("{} runs before {}, which precedes it in program order: a peer may need what that op "
                         "sends before it can complete this wait (a deadlock compiled where eager completes)",
                         describe(n), describe(comms[next].second)));
    }
  }

  // use_before_def: every value read after its producer ran. A wait's result read before the
  // wait is the racy read it is (read_before_ready), not a mere ordering slip.
  void check_definitions() const {
    std::vector<char> defined(g_.num_values(), 0);
    for (const Value* in : g_.inputs()) defined[size_t(in->id())] = 1;
    auto check = [&](const Value* v, const Node* reader) {
      if (defined[size_t(v->id())]) return;
      const Node* p = v->producer();
      const std::string who = reader ? describe(reader) : "the program's return";
      if (!p || !pos_.count(p))
        fail(Kind::use_before_def, reader, p,
             fmt::format("{} reads %{}, which no node of the schedule produces{}", who, v->name(),
                         p ? fmt::format(" (its producer {} was removed)", describe(p)) : ""));
      if (is_wait(*p) && p->arg(0).kind == ir::Arg::Kind::Value && defined[size_t(p->arg(0).value->id())])
        fail(Kind::read_before_ready, reader, p,
             fmt::format("{} reads %{} before {} ran: %{} is still in flight", who, v->name(), describe(p),
                         p->arg(0).value->name()));
      fail(Kind::use_before_def, reader, p,
           fmt::format("{} reads %{} before its producer {} ran", who, v->name(), describe(p)));
    };
    for (const Node* n : nodes_) {
      for (const auto& a : n->args()) a.for_each_value([&](const Value* v) { check(v, n); });
      for (const Value* o : n->outputs()) defined[size_t(o->id())] = 1;
    }
    for (const Value* v : g_.outputs()) check(v, nullptr);
  }

  // never_waited: which ops go in flight, each entry with its wait (the first on its handle).
  void find_waits() {
    for (const Node* n : nodes_)
      if (is_wait(*n) && n->arg(0).kind == ir::Arg::Kind::Value) wait_of_.emplace(n->arg(0).value, n);
    for (const Node* n : nodes_) {
      std::vector<Entry> entries;
      if (is_p2p(*n)) {
        entries = p2p_entries(g_, *n);
      } else if (is_collective(*n)) {
        bool waited = false;
        for (const Value* o : n->outputs()) waited |= wait_of_.count(o) > 0;
        if (waited) entries = collective_entries(*n);
      }
      for (const Entry& e : entries)
        if (!wait_of_.count(e.handle))
          fail(Kind::never_waited, n, nullptr,
               fmt::format("{}: {} (handle %{}) is never waited: it is still in flight at the end of the program "
                           "(expected a c10d::wait_tensor(%{}))",
                           describe(n), e.what.empty() ? "its result" : e.what, e.handle->name(), e.handle->name()));
      if (!entries.empty()) entries_.emplace(n, std::move(entries));
    }
  }

  // plan_mismatch: the executable plan (what the executor runs, ir/exec_plan.h)
  // is this schedule under the contract above: the same instructions in order,
  // each asynchronous op started where this checker puts it in flight and
  // completed at the waits it found, planned buffers exactly the slotted results.
  // A graph without a plan (a test's hand-made schedule) is checked as ordered.
  void check_plan() const {
    const ir::ExecPlan* plan = g_.exec_plan();
    if (!plan) return;
    const auto& steps = plan->instructions;
    if (steps.size() != nodes_.size())
      fail(Kind::plan_mismatch, nullptr, nullptr,
           fmt::format("the executable plan has {} instructions, the schedule {} nodes", steps.size(),
                       nodes_.size()));
    for (size_t i = 0; i < steps.size(); ++i) {
      const Node* n = nodes_[i];
      const ir::Instruction& s = steps[i];
      if (s.node != n)
        fail(Kind::plan_mismatch, n, s.node,
             fmt::format("instruction {} of the plan runs {}, the schedule {}", i, s.node->op_name(), describe(n)));
      // The waits this checker pairs with n, by position.
      std::vector<int> waits;
      if (auto it = entries_.find(n); it != entries_.end())
        for (const Entry& e : it->second) waits.push_back(int(pos_.at(wait_of_.at(e.handle))));
      std::sort(waits.begin(), waits.end());
      waits.erase(std::unique(waits.begin(), waits.end()), waits.end());
      std::vector<int> planned_waits = s.waits;
      std::sort(planned_waits.begin(), planned_waits.end());
      if (waits != planned_waits || (is_collective(*n) && s.start_async != !waits.empty()))
        fail(Kind::plan_mismatch, n, nullptr,
             fmt::format("{}: the plan completes it at instructions [{}], the contract at [{}]", describe(n),
                         fmt::join(planned_waits, ", "), fmt::join(waits, ", ")));
      for (int w : waits)
        if (steps[size_t(w)].start != int(i))
          fail(Kind::plan_mismatch, nodes_[size_t(w)], n,
               fmt::format("{}: the plan's wait at instruction {} completes instruction {}, not {}", describe(n), w,
                           steps[size_t(w)].start, i));
      std::vector<int> slotted;
      for (const Value* o : n->outputs())
        if (g_.plan().slots.count(o->id())) slotted.push_back(o->id());
      if (slotted != s.planned)
        fail(Kind::plan_mismatch, n, nullptr,
             fmt::format("{}: the plan gives planned buffers to {} results, the memory plan has slots for {}",
                         describe(n), s.planned.size(), slotted.size()));
    }
  }

  // plan_mismatch, after the simulation found which inputs are written: an input
  // the executor copies into symmetric memory has a slot, and is copied back
  // when the program writes it.
  void check_plan_inputs() const {
    const ir::ExecPlan* plan = g_.exec_plan();
    if (!plan) return;
    for (size_t i = 0; i < g_.inputs().size(); ++i) {
      const Value* in = g_.inputs()[i];
      if (!plan->input_symmetric.at(i)) continue;
      if (!slot_of(in))
        fail(Kind::plan_mismatch, nullptr, nullptr,
             fmt::format("graph input %{} is copied into symmetric memory by the plan, but has no slot", in->name()));
      if (written_.count(in) && !plan->input_written.at(i))
        fail(Kind::plan_mismatch, nullptr, nullptr,
             fmt::format("graph input %{} is written, but the plan does not copy it back", in->name()));
      if (!plan->input_copied_in.at(i)) check_overwritten_first(in);
    }
  }

  // An input the plan does not copy in starts with stale bytes in its symmetric
  // buffer: every byte must be written before anything reads it, and all of them
  // before the end copies the buffer back. This check's own reading of the ops:
  // asynchronous ops read and write their entries (a receive writes only), a
  // synchronous node reads every argument it does not merely alias, except the
  // self of aten::copy_, fill_ and zero_, and writes sync_writes().
  void check_overwritten_first(const Value* in) const {
    ByteRuns written;
    const ByteRuns all{{0, in->type().nbytes()}};
    auto runs = [&](const Value* v) { return view_byte_runs(ir::ViewExtent(v->type()).view()); };
    auto whole = [&] { return runs_cover(written, all); };
    auto read = [&](const Node* n, const Value* v) {
      if (root_of(v) != in || whole()) return;
      const auto r = runs(v);
      if (!r || !runs_cover(written, *r))
        fail(Kind::plan_mismatch, n, nullptr,
             fmt::format("graph input %{} is not copied into symmetric memory, but {} reads %{} before the "
                         "program has written those bytes of %{}",
                         in->name(), describe(n), v->name(), in->name()));
    };
    auto write = [&](const Value* v) {
      if (root_of(v) != in) return;
      if (const auto r = runs(v)) written = merge_runs(written, *r);
    };
    for (const Node* n : nodes_) {
      if (whole()) return;
      if (auto it = entries_.find(n); it != entries_.end()) {
        for (const Entry& e : it->second)
          for (const Value* v : e.reads) read(n, v);
        for (const Entry& e : it->second)
          for (const Value* v : e.writes) write(v);
        continue;
      }
      const auto aliased = n->output_aliases();
      const auto& sc = n->schema();
      const bool self_overwritten =
          !n->functional() && sc.ns == "aten" && (sc.name == "copy_" || sc.name == "fill_" || sc.name == "zero_");
      for (size_t k = 0; k < n->args().size(); ++k)
        n->arg(k).for_each_value([&](const Value* v) {
          const bool only_aliased = std::find(aliased.begin(), aliased.end(), v) != aliased.end();
          if (v->is_tensor() && !only_aliased && !(self_overwritten && k == 0)) read(n, v);
        });
      for (const Value* w : sync_writes(*n)) write(w);
    }
    if (!whole())
      fail(Kind::plan_mismatch, nullptr, nullptr,
           fmt::format("graph input %{} is not copied into symmetric memory, but the program does not write all of "
                       "it: the copy back would return stale bytes",
                       in->name()));
  }

  // buffer_too_small: every slot inside its arena and large enough for every value living in it.
  void check_slots() const {
    const auto& plan = g_.plan();
    const int64_t guard = plan.sentinels ? kSentinelBytes : 0;
    for (const auto& [id, s] : plan.slots) {
      const Value* v = g_.value(size_t(id));
      const int64_t arena = plan.arena_bytes[s.arena == ir::Arena::regular ? 0 : 1];
      if (s.offset < 0 || s.bytes < 0 || s.offset + s.bytes + guard > arena)
        fail(Kind::buffer_too_small, v->producer(), nullptr,
             fmt::format("the slot of %{} ({} arena, {} bytes at +{}{}) does not fit in the arena's {} bytes",
                         v->name(), s.arena == ir::Arena::regular ? "regular" : "symmetric", s.bytes, s.offset,
                         guard ? " and its sentinel" : "", arena));
    }
    for (size_t id = 0; id < g_.num_values(); ++id) {
      const Value* r = roots_[id];
      if (!r || !g_.value(id)->is_tensor()) continue;
      const ir::BufferSlot* s = slot_of(r);
      const Value* v = g_.value(id);
      if (s && v->type().storage_bytes() > s->bytes)
        fail(Kind::buffer_too_small, v->producer(), r->producer(),
             fmt::format("%{} ({}{}) needs {} bytes of the storage of %{}, but its slot holds {} ({} arena +{})",
                         v->name(), v->type().str(true), v->producer() ? ", made by " + describe(v->producer()) : "",
                         v->type().storage_bytes(), r->name(), s->bytes,
                         s->arena == ir::Arena::regular ? "regular" : "symmetric", s->offset));
    }
  }

  // overlapping_buffers by liveness: a buffer lives from the node that makes it to
  // the last node that reads it (an async op reads what it takes until its wait;
  // returned buffers and symmetric copies of inputs live to the end). Two
  // buffers live at once may not share arena bytes, whether or not the bytes
  // are read again in between (the simulation below catches what is).
  void check_live_overlap() const {
    const auto& plan = g_.plan();
    const int64_t guard = plan.sentinels ? kSentinelBytes : 0;
    const int64_t end = int64_t(nodes_.size());
    std::unordered_map<const Value*, std::pair<int64_t, int64_t>> life;  // root -> [born, dies]
    for (const auto& [id, s] : plan.slots) {
      const Value* r = g_.value(size_t(id));
      life[r] = {r->producer() ? int64_t(pos_.at(r->producer())) : -1, r->producer() ? -1 : end};
    }
    auto read_at = [&](const Value* v, int64_t p) {
      if (auto it = life.find(root_of(v)); it != life.end()) it->second.second = std::max(it->second.second, p);
    };
    for (size_t p = 0; p < nodes_.size(); ++p) {
      const Node* n = nodes_[p];
      for (const auto& a : n->args()) a.for_each_value([&](const Value* v) { read_at(v, int64_t(p)); });
      if (auto it = entries_.find(n); it != entries_.end())
        for (const Entry& e : it->second)
          if (auto w = wait_of_.find(e.handle); w != wait_of_.end()) {
            for (const Value* v : e.reads) read_at(v, int64_t(pos_.at(w->second)));
            for (const Value* v : e.writes) read_at(v, int64_t(pos_.at(w->second)));
          }
    }
    for (const Value* v : g_.outputs()) read_at(v, end);
    struct Live {
      const Value* root;
      const ir::BufferSlot* slot;
      int64_t born, dies;
    };
    std::vector<Live> all;
    for (const auto& [r, bd] : life) all.push_back({r, slot_of(r), bd.first, std::max(bd.first, bd.second)});
    std::sort(all.begin(), all.end(), [](const Live& a, const Live& b) {
      return a.born != b.born ? a.born < b.born : a.root->id() < b.root->id();
    });
    std::vector<const Live*> active;
    for (const Live& b : all) {
      std::erase_if(active, [&](const Live* a) { return a->dies < b.born; });
      for (const Live* a : active)
        if (a->slot->arena == b.slot->arena && a->slot->offset < b.slot->offset + b.slot->bytes + guard &&
            b.slot->offset < a->slot->offset + a->slot->bytes + guard)
          fail(Kind::overlapping_buffers, b.root->producer(), a->root->producer(),
               fmt::format("the slot of %{} ({} bytes at +{}) overlaps the slot of %{} ({} bytes at +{}) while "
                           "both are live: %{} is made by {} and %{} is still read by instruction {}",
                           b.root->name(), b.slot->bytes, b.slot->offset, a->root->name(), a->slot->bytes,
                           a->slot->offset, b.root->name(), describe(b.root->producer()), a->root->name(), a->dies));
      active.push_back(&b);
    }
  }

  // --- the simulation: read_before_ready, overwrite_in_flight, overlapping_buffers ---

  ByteOwners& owners(int64_t space) { return owners_[space == kRegular ? 0 : 1]; }

  // A handle is used only by its wait; the bytes of v, when the node reads them,
  // are neither still being written nor another buffer's meanwhile.
  void check_read(const Value* v, const Node* n, bool bytes = true) {
    for (const InFlight& f : active_)
      if (f.entry->handle == v)
        fail(Kind::read_before_ready, n, f.node,
             fmt::format("{} uses %{}, the handle of {}, before its wait {}", describe(n), v->name(), describe(f),
                         describe(f.wait)));
    if (!v->is_tensor() || !bytes) return;
    const Place& p = place_of(v);
    for (const InFlight& f : active_)
      for (const Access& w : f.writes)
        if (w.place.space == p.space)
          if (auto iv = first_common(p.bytes, w.place.bytes))
            fail(w.place.root == p.root ? Kind::read_before_ready : Kind::overlapping_buffers, n, f.node,
                 fmt::format("{} reads %{} ({}) while {} still writes them (as %{}) until its wait {}", describe(n),
                             v->name(), describe(p, *iv), describe(f), w.value->name(), describe(f.wait)));
    if (p.space >= 0) return;
    for (const Interval& iv : p.bytes)
      if (auto o = owners(p.space).foreign(iv, p.root))
        fail(Kind::overlapping_buffers, n, o->second.writer,
             fmt::format("{} reads %{} ({}), but {} wrote {}there since: the buffers of %{} and %{} overlap while both "
                         "are live",
                         describe(n), v->name(), describe(p, o->first),
                         o->second.writer ? describe(o->second.writer) : "the copy of the input",
                         o->second.sentinel ? "its sentinel " : "", p.root->name(), o->second.root->name()));
  }

  void check_write(const Access& a, const Node* n) const {
    for (const InFlight& f : active_) {
      auto clash = [&](const Access& b, const char* does) {
        if (b.place.space != a.place.space) return;
        if (auto iv = first_common(a.place.bytes, b.place.bytes))
          fail(b.place.root == a.place.root ? Kind::overwrite_in_flight : Kind::overlapping_buffers, n, f.node,
               fmt::format("{} writes {}%{} ({}) while {} still {} them (as %{}) until its wait {}", describe(n),
                           a.sentinel ? "the sentinel of " : "", a.value->name(), describe(a.place, *iv), describe(f),
                           does, b.value->name(), describe(f.wait)));
      };
      for (const Access& b : f.reads) clash(b, "reads");
      for (const Access& b : f.writes) clash(b, "writes");
    }
  }

  void own(const Access& a, const Node* n) {
    if (n) written_.insert(a.place.root);
    if (a.place.space >= 0) return;
    for (const Interval& iv : a.place.bytes) owners(a.place.space).assign(iv, {a.place.root, n, a.sentinel});
  }

  Access access(const Value* v) const { return {v, place_of(v)}; }

  // The tensors a synchronous node writes: its fresh results (all of them for a
  // functional node) and, run in place, what its schema or resolver says.
  std::vector<const Value*> sync_writes(const Node& n) const {
    std::vector<const Value*> out;
    for (const Value* o : n.outputs())
      if (o->is_tensor() && (n.functional() || root_of(o) == o)) out.push_back(o);
    if (!n.functional())
      for (const auto& w : n.writes()) out.push_back(n.value_at(w));
    return out;
  }

  // The executor arms 64 guard bytes after each planned result before its node runs.
  std::vector<Access> sentinels(const Node* n) const {
    std::vector<Access> out;
    if (!g_.plan().sentinels) return out;
    for (const Value* o : n->outputs()) {
      const ir::BufferSlot* s = slot_of(o);
      if (!s || root_of(o) != o) continue;
      const int64_t end = s->offset + s->bytes;
      out.push_back(
          {o, {s->arena == ir::Arena::regular ? kRegular : kSymmetric, o, {{end, end + kSentinelBytes}}}, true});
    }
    return out;
  }

  // Within one node: what it writes must not share bytes with another buffer it
  // reads or writes (the plan never places a result over its node's inputs).
  void check_within(const Node* n, const std::vector<Access>& reads, const std::vector<Access>& writes) const {
    for (size_t i = 0; i < writes.size(); ++i) {
      const Access& w = writes[i];
      auto clash = [&](const Access& b, const char* does) {
        if (b.place.space != w.place.space || b.place.root == w.place.root) return;
        if (auto iv = first_common(w.place.bytes, b.place.bytes))
          fail(Kind::overlapping_buffers, n, nullptr,
               fmt::format("{} writes {}%{} and {} %{} in the same bytes ({}): the buffers of %{} and %{} overlap",
                           describe(n), w.sentinel ? "the sentinel of " : "", w.value->name(), does, b.value->name(),
                           describe(w.place, *iv), w.place.root->name(), b.place.root->name()));
      };
      for (const Access& r : reads) clash(r, "reads");
      for (size_t j = 0; j < i; ++j) clash(writes[j], "writes");
    }
  }

  void simulate() {
    // Inputs copied into symmetric memory own their slots from the start.
    for (const Value* in : g_.inputs())
      if (in->is_tensor() && slot_of(in)) own(access(in), nullptr);
    for (const Node* n : nodes_) {
      if (is_wait(*n) && n->arg(0).kind == ir::Arg::Kind::Value) {
        const Value* h = n->arg(0).value;
        if (wait_of_.at(h) == n) std::erase_if(active_, [&](const InFlight& f) { return f.entry->handle == h; });
      }
      std::vector<Access> reads, writes = sentinels(n);
      auto it = entries_.find(n);
      if (it == entries_.end()) {
        // A view (or a wait) only aliases its argument: its readers read the bytes.
        const auto aliased = n->output_aliases();
        for (const auto& a : n->args())
          a.for_each_value([&](const Value* v) {
            const bool only_aliased = std::find(aliased.begin(), aliased.end(), v) != aliased.end();
            check_read(v, n, /*bytes=*/!only_aliased);
            if (v->is_tensor() && !only_aliased) reads.push_back(access(v));
          });
        for (const Value* w : sync_writes(*n)) writes.push_back(access(w));
        check_within(n, reads, writes);
        for (const Access& a : writes) {
          check_write(a, n);
          own(a, n);
        }
        continue;
      }
      // In flight from here: each entry is checked against those before it, its
      // own node's included.
      for (const Entry& e : it->second) {
        for (const Value* v : e.reads) reads.push_back(access(v));
        for (const Value* v : e.writes) writes.push_back(access(v));
      }
      check_within(n, reads, writes);
      for (const Access& a : sentinels(n)) {
        check_write(a, n);
        own(a, n);
      }
      for (const Entry& e : it->second) {
        InFlight f{n, &e, wait_of_.at(e.handle), {}, {}};
        for (const Value* v : e.reads) {
          check_read(v, n);
          f.reads.push_back(access(v));
        }
        for (const Value* v : e.writes) {
          f.writes.push_back(access(v));
          check_write(f.writes.back(), n);
          own(f.writes.back(), n);
        }
        active_.push_back(std::move(f));
      }
    }
    // The end reads what the program returns, and copies written symmetric inputs back.
    for (const Value* v : g_.outputs()) check_read(v, nullptr);
    for (const Value* in : g_.inputs())
      if (in->is_tensor() && slot_of(in) && written_.count(in)) check_read(in, nullptr);
  }

  const ir::Graph& g_;
  std::span<const Node* const> order_;
  const std::vector<Node*>& nodes_;
  std::vector<Value*> roots_;
  std::unordered_map<const Node*, size_t> pos_;
  std::unordered_map<const Value*, const Node*> wait_of_;  // handle -> its first wait
  std::unordered_map<const Node*, std::vector<Entry>> entries_;
  std::vector<InFlight> active_;
  ByteOwners owners_[2];
  std::unordered_set<const Value*> written_;          // roots some node writes
  mutable std::vector<std::optional<Place>> places_;  // by value id
};

}  // namespace

void check_hazards(const ir::Graph& g, std::span<const ir::Node* const> program_order) {
  HazardChecker(g, program_order).run();
}

}  // namespace symmflow::passes
