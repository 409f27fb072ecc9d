#include "symmflow/passes/race_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "symmflow/core/overlap.h"
#include "symmflow/ir/alias.h"
#include "symmflow/passes/comm_ops.h"

namespace symmflow::passes {
namespace {

using ir::Graph;
using ir::Node;
using ir::Value;
using ir::WriteSlot;

bool is_c10d(const Node& n, std::string_view name) {
  return n.schema().ns == "c10d" && n.schema().name == name;
}
bool is_wait(const Node& n) { return comm_kind(n) == CommKind::wait; }
bool is_batch(const Node& n) { return is_c10d(n, "batch_isend_irecv"); }
bool is_p2p(const Node& n) { return comm_kind(n) == CommKind::p2p; }

// One P2P op (one entry of a batch) between its post and its wait.
struct InFlight {
  const Node* node;
  bool recv;
  const Value* buf;     // the bytes it sends, or receives into
  const Value* handle;  // its result, what the program waits on
  int root;             // buf's storage root (Value id)
  int tensor;           // buf's eager tensor (Value id, see tensor_ below)
  ir::ViewExtent extent;
};

// A read or write of `v` by `node`, as the error says it ("reads", "sends").
struct Access {
  const Node* node;
  const Value* v;
  bool write;
  const char* verb;
};

class Checker {
 public:
  explicit Checker(const Graph& g) : g_(g), root_(g.num_values(), -1), tensor_(g.num_values(), -1) {
    auto roots = ir::storage_roots(g);
    for (size_t i = 0; i < roots.size(); ++i) root_[i] = roots[i] ? roots[i]->id() : int(i);
    name_tensors();
  }

  void run() {
    for (const Node* n : g_.nodes()) {
      if (is_wait(*n)) retire(*n);
      else if (is_p2p(*n)) post(*n);
      else if (!in_flight_.empty())  // nothing in flight: nothing to race
        for (const Access& a : accesses(*n)) check(a);
    }
    if (!in_flight_.empty()) never_waited(in_flight_.front());
  }

 private:
  // Eager's tensor identity (ops/work_registry.h keys works by TensorImpl): a
  // value is the same tensor as the input its op returns in place (a
  // Tensor(a!) return), and a P2P handle or a wait's result is the tensor it
  // was given. Views and every other result are tensors of their own.
  void name_tensors() {
    for (const Value* in : g_.inputs()) tensor_[size_t(in->id())] = in->id();
    for (const Node* n : g_.nodes()) {
      const bool passes_through = (is_p2p(*n) || is_wait(*n)) && !n->functional();
      const auto src = ir::output_storage_sources(*n);
      const auto& slots = n->output_slots();
      for (size_t i = 0; i < n->outputs().size(); ++i) {
        const Value* o = n->output(i);
        const Value* same = nullptr;
        if (passes_through && i < src.size()) same = src[i];
        else if (!n->functional() && i < slots.size() && slots[i]) same = n->value_at(*slots[i]);
        tensor_[size_t(o->id())] = same && tensor_[size_t(same->id())] >= 0 ? tensor_[size_t(same->id())] : o->id();
      }
    }
  }

  int root(const Value* v) const { return root_[size_t(v->id())]; }
  int tensor(const Value* v) const { return tensor_[size_t(v->id())]; }

  // What a non-P2P node reads and writes: the tensors it writes (unless it is
  // functional), and every other tensor argument except those its results are
  // views of (making a view reads nothing).
  std::vector<Access> accesses(const Node& n) const {
    std::vector<Access> out;
    std::vector<const Value*> written, viewed;
    if (!n.functional())
      for (const WriteSlot& s : n.writes()) written.push_back(n.value_at(s));
    for (const Value* a : n.output_aliases())
      if (a) viewed.push_back(a);
    for (const Value* w : written) out.push_back({&n, w, true, "writes"});
    for (const auto& arg : n.args())
      arg.for_each_value([&](const Value* v) {
        auto has = [&](const std::vector<const Value*>& l) { return std::find(l.begin(), l.end(), v) != l.end(); };
        if (v->is_tensor() && !has(written) && !has(viewed)) out.push_back({&n, v, false, "reads"});
      });
    return out;
  }

  // The first in-flight op that `a` races: any op whose bytes it writes, a
  // receive whose bytes it reads.
  void check(const Access& a) const {
    const ir::ViewExtent ext(a.v->type());
    for (const InFlight& f : in_flight_)
      if ((a.write || f.recv) && root(a.v) == f.root && views_share_bytes(ext.view(), f.extent.view()))
        race(a, f);
  }

  // Posts a P2P node's entries: receives first, then sends (as the runtime posts
  // a batch), each checked against what is already in flight, its batch included.
  void post(const Node& n) {
    const size_t arg = is_batch(n) ? 3 : 0;
    const ir::Arg& a = n.arg(arg);
    const bool list = a.kind == ir::Arg::Kind::List;
    const size_t count = list ? a.elems.size() : 1;
    const auto& writes = n.writes();
    for (bool recvs : {true, false})
      for (size_t e = 0; e < count; ++e) {
        const WriteSlot slot{arg, list ? int64_t(e) : -1};
        const bool recv = std::find(writes.begin(), writes.end(), slot) != writes.end();
        if (recv != recvs) continue;
        const Value* handle = e < n.outputs().size() ? n.output(e) : nullptr;
        // A functional receive leaves its argument alone and fills its result.
        const Value* buf = recv && n.functional() && handle ? handle : n.value_at(slot);
        check({&n, buf, recv, recv ? "receives into" : "sends"});
        in_flight_.push_back({&n, recv, buf, handle, root(buf), tensor(buf), ir::ViewExtent(buf->type())});
      }
  }

  // c10d::wait_tensor(t): the ops on t's tensor, else every op on t's storage.
  void retire(const Node& n) {
    const Value* t = n.arg(0).value;
    if (!t) return;
    auto gone = [&](auto pred) {
      const size_t before = in_flight_.size();
      in_flight_.erase(std::remove_if(in_flight_.begin(), in_flight_.end(), pred), in_flight_.end());
      return in_flight_.size() != before;
    };
    if (!gone([&](const InFlight& f) { return f.tensor == tensor(t); }))
      gone([&](const InFlight& f) { return f.root == root(t); });
  }

  std::string where(const Node& n) const {
    const std::string& file = g_.file().empty() ? std::string("<graph>") : g_.file();
    if (n.loc().line > 0) return fmt::format("{}:{}:{}", file, n.loc().line, n.loc().col);
    return fmt::format("{}: op {} of @{}", file, g_.position(&n) + 1, g_.name());  // traced: no lines
  }

  // The wait that retires f, to name in the error: the first later wait_tensor
  // of f's tensor or storage.
  std::string its_wait(const InFlight& f, const Node* after) const {
    const auto& nodes = g_.nodes();
    for (size_t i = after ? g_.position(after) + 1 : nodes.size(); i < nodes.size(); ++i) {
      const Node& w = *nodes[i];
      const Value* t = is_wait(w) ? w.arg(0).value : nullptr;
      if (t && (tensor(t) == f.tensor || root(t) == f.root))
        return fmt::format("c10d::wait_tensor(%{}) at {}", t->name(), where(w));
    }
    return fmt::format("with c10d::wait_tensor(%{}); none follows", f.handle ? f.handle->name() : f.buf->name());
  }

  [[noreturn]] void race(const Access& a, const InFlight& f) const {
    const std::string subject = tensor(a.v) == f.tensor
                                    ? fmt::format("%{}", a.v->name())
                                    : fmt::format("%{}, which shares bytes with %{},", a.v->name(), f.buf->name());
    const std::string it = tensor(a.v) == f.tensor ? "it" : fmt::format("%{}", f.buf->name());
    throw RaceError(fmt::format("{}: error: race: {} {} {} while {} at {} still {} {}; wait for it first ({})",
                                where(*a.node), a.node->schema().qualified_name(), a.verb, subject,
                                f.node->schema().qualified_name(), where(*f.node),
                                f.recv ? "receives into" : "sends", it, its_wait(f, a.node)),
                    a.node, f.node);
  }

  [[noreturn]] void never_waited(const InFlight& f) const {
    throw RaceError(fmt::format("{}: error: race: {} is never waited: the program returns while it still {} "
                                "%{}; wait for it before the return (c10d::wait_tensor(%{}))",
                                where(*f.node), f.node->schema().qualified_name(),
                                f.recv ? "receives into" : "sends", f.buf->name(),
                                f.handle ? f.handle->name() : f.buf->name()),
                    nullptr, f.node);
  }

  const Graph& g_;
  std::vector<int> root_, tensor_;  // by Value id: storage root, eager tensor
  std::vector<InFlight> in_flight_;
};

}  // namespace

void check_races(const ir::Graph& g) { Checker(g).run(); }

}  // namespace symmflow::passes
