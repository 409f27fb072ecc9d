#include "symmflow/ir/overwritten_inputs.h"

#include <algorithm>
#include <optional>

#include "symmflow/core/overlap.h"
#include "symmflow/ir/alias.h"
#include "symmflow/ir/comm_ops.h"

namespace symmflow::ir {

bool overwrites_without_reading(const Node& n, const WriteSlot& s) {
  if (n.functional()) return false;
  if (comm_kind(n) == CommKind::p2p) return true;  // a P2P op writes only what it receives
  const auto& sc = n.schema();
  if (sc.ns != "aten" || s.arg != 0 || s.elem >= 0) return false;
  return sc.name == "copy_" || sc.name == "fill_" || sc.name == "zero_";
}

namespace {

constexpr size_t kMaxCoverRuns = 4096;

// One input's bytes written so far; decided once every byte is written (yes) or
// a byte is read first (no).
struct Tracked {
  enum class State { open, yes, no } state = State::no;
  int64_t bytes = 0;
  ByteRuns written;
};

std::optional<ByteRuns> runs_of(const Value* v) {
  const ViewExtent e(v->type());
  return view_byte_runs(e.view());
}

// Calls f(slot, value) for every value argument of n, list elements included.
template <class F>
void for_each_slot(const Node& n, F&& f) {
  for (size_t a = 0; a < n.args().size(); ++a) {
    const Arg& arg = n.args()[a];
    if (arg.kind == Arg::Kind::Value) f(WriteSlot{a, -1}, arg.value);
    for (size_t e = 0; e < arg.elems.size(); ++e)
      arg.elems[e].for_each_value([&](Value* v) { f(WriteSlot{a, int64_t(e)}, v); });
  }
}

}  // namespace

std::vector<bool> overwritten_before_read(const Graph& g, const std::vector<Value*>& roots) {
  const size_t k = g.inputs().size();
  std::vector<int> input_of(g.num_values(), -1);
  std::vector<Tracked> t(k);
  size_t open = 0;
  for (size_t i = 0; i < k; ++i) {
    const Value* in = g.inputs()[i];
    // The whole storage is the input's own bytes: a copy back writes exactly them.
    if (!in->is_tensor() || !in->type().is_contiguous_at_zero() || in->type().nbytes() != in->storage_size() ||
        in->type().nbytes() == 0)
      continue;
    input_of[size_t(in->id())] = int(i);
    t[i].state = Tracked::State::open;
    t[i].bytes = in->type().nbytes();
    ++open;
  }
  auto tracked = [&](const Value* v) -> Tracked* {
    const Value* r = roots[size_t(v->id())];
    const int i = r ? input_of[size_t(r->id())] : -1;
    return i >= 0 && t[size_t(i)].state == Tracked::State::open ? &t[size_t(i)] : nullptr;
  };
  for (const Node* n : g.nodes()) {
    if (open == 0) break;
    if (is_pure_view(*n) || comm_kind(*n) == CommKind::wait) continue;  // they read no element
    const auto& writes = n->writes();
    auto written_only = [&](const WriteSlot& s) {
      return std::find(writes.begin(), writes.end(), s) != writes.end() && overwrites_without_reading(*n, s);
    };
    // Reads first: the node sees the bytes as they were before it.
    for_each_slot(*n, [&](const WriteSlot& s, const Value* v) {
      Tracked* x = tracked(v);
      if (!x || written_only(s)) return;
      const auto runs = runs_of(v);
      if (!runs || !runs_cover(x->written, *runs)) x->state = Tracked::State::no, --open;
    });
    if (n->functional()) continue;  // its results are fresh buffers
    for (const WriteSlot& s : writes) {
      const Value* v = n->value_at(s);
      Tracked* x = tracked(v);
      if (!x) continue;
      const auto runs = runs_of(v);
      if (!runs) continue;
      x->written = merge_runs(x->written, *runs);
      // Scattered writes (single elements far apart) would make every merge
      // long: past kMaxCoverRuns the input is copied in, as when in doubt.
      if (x->written.size() > kMaxCoverRuns) {
        x->state = Tracked::State::no, --open;
        continue;
      }
      if (runs_cover(x->written, ByteRuns{{0, x->bytes}})) x->state = Tracked::State::yes, --open;
    }
  }
  std::vector<bool> out(k);
  for (size_t i = 0; i < k; ++i) out[i] = t[i].state == Tracked::State::yes;
  return out;
}

}  // namespace symmflow::ir
