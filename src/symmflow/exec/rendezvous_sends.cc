#include "symmflow/exec/rendezvous_sends.h"

#include <fmt/format.h>

#include <map>
#include <memory>
#include <sstream>
#include <tuple>

#include "symmflow/exec/comm_match.h"
#include "symmflow/ir/alias.h"
#include "symmflow/ir/exec_plan.h"
#include "symmflow/ir/comm_ops.h"
#include "symmflow/runtime/world.h"

namespace symmflow::exec {

using Kind = CommStep::Kind;

std::vector<CommStep> comm_steps_of(const ir::Graph& g) {
  const ir::ExecPlan* plan = g.exec_plan();
  if (!plan || !plan->built) return {CommStep{}};  // unknown
  const auto roots = ir::storage_roots(g);
  const auto ops = comm_ops_of(g);  // P2P entries and collectives, in instruction order
  std::map<std::pair<int, int>, int> step_of;  // (instruction, entry) -> step
  std::vector<CommStep> out;
  size_t k = 0;
  for (size_t i = 0; i < plan->instructions.size(); ++i) {
    const ir::Instruction& s = plan->instructions[i];
    // A plugin's effect communicates in ways the model does not know, and a
    // collective comm_ops_of has no entry for (no tensor) is unknown too; a
    // symm_mem op has its entry, a collective that completes at its node.
    if ((s.kind == ir::InstrKind::effect || s.kind == ir::InstrKind::collective) &&
        (k == ops.size() || ops[k].node != int(i)))
      out.push_back(CommStep{});
    for (; k < ops.size() && ops[k].node == int(i); ++k) {
      const CommOp& o = ops[k];
      CommStep c;
      c.instruction = int(i);
      c.entry = o.entry;
      if (o.kind == CommOp::Kind::collective) {
        c.kind = Kind::collective;
        c.group = o.group;
        c.blocks = !s.start_async;
      } else {
        c.kind = o.group == "world" ? (o.kind == CommOp::Kind::send ? Kind::send : Kind::recv) : Kind::unknown;
        c.peer = o.peer;
        c.tag = o.tag;
        c.direct = ir::moves_without_staging(*o.value, roots);
      }
      step_of[{int(i), o.entry}] = int(out.size());
      out.push_back(c);
    }
    if (s.kind != ir::InstrKind::wait) continue;
    CommStep w;
    w.kind = Kind::wait;
    if (s.start >= 0) {
      // A P2P wait completes its handle's entry; a collective's, the whole op.
      const ir::Value* handle = s.node->arg(0).value;
      const bool p2p = plan->instructions[size_t(s.start)].kind == ir::InstrKind::p2p;
      auto it = step_of.find({s.start, p2p && handle ? int(handle->output_index()) : 0});
      if (it != step_of.end()) w.target = it->second;
    }
    out.push_back(w);
  }
  return out;
}

std::string serialize(const std::vector<CommStep>& steps) {
  std::string s;
  for (const auto& c : steps)
    s += fmt::format("{} {} {} {} {} {} {}\n", int(c.kind), c.peer, c.tag, int(c.direct), int(c.blocks), c.target,
                     c.group.empty() ? "-" : c.group);
  return s;
}

std::vector<CommStep> deserialize_steps(const std::string& text) {
  std::vector<CommStep> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::istringstream l(line);
    CommStep c;
    int kind = 0, direct = 0, blocks = 0;
    l >> kind >> c.peer >> c.tag >> direct >> blocks >> c.target >> c.group;
    c.kind = Kind(kind);
    c.direct = direct != 0;
    c.blocks = blocks != 0;
    if (c.group == "-") c.group.clear();
    out.push_back(std::move(c));
  }
  return out;
}

namespace {

// The programs of every rank, their sends matched to their receives and their
// collectives to each other, run as far as they can go (the header's model).
class Simulation {
 public:
  explicit Simulation(const std::vector<std::vector<CommStep>>& by_rank) : p_(by_rank) {}

  // False when some op has no partner (or the model does not cover a program).
  bool match() {
    const int w = int(p_.size());
    partner_.resize(p_.size());
    using Channel = std::tuple<int, int, int64_t>;  // (src, dst, tag)
    std::map<Channel, std::vector<int>> sends, recvs;
    std::map<std::string, std::vector<std::vector<int>>> colls;  // group -> per rank, its collectives' steps
    for (int r = 0; r < w; ++r) {
      partner_[size_t(r)].assign(p_[size_t(r)].size(), -1);
      for (int i = 0; i < int(p_[size_t(r)].size()); ++i) {
        const CommStep& c = p_[size_t(r)][size_t(i)];
        if (c.kind == Kind::unknown) return false;
        if ((c.kind == Kind::send || c.kind == Kind::recv) && (c.peer < 0 || c.peer >= w)) return false;
        if (c.kind == Kind::send) sends[{r, c.peer, c.tag}].push_back(i);
        if (c.kind == Kind::recv) recvs[{c.peer, r, c.tag}].push_back(i);
        if (c.kind == Kind::collective) {
          auto& per_rank = colls[c.group];
          per_rank.resize(p_.size());
          per_rank[size_t(r)].push_back(i);
        }
      }
    }
    for (const auto& [ch, s] : sends) {
      const auto [src, dst, tag] = ch;
      auto it = recvs.find(ch);
      if (it == recvs.end() || it->second.size() != s.size()) return false;
      for (size_t k = 0; k < s.size(); ++k) {
        partner_[size_t(src)][size_t(s[k])] = it->second[k];
        partner_[size_t(dst)][size_t(it->second[k])] = s[k];
      }
    }
    for (const auto& [ch, r] : recvs)
      if (!sends.count(ch)) return false;
    // A collective waits for the same-numbered collective of every rank that
    // issues any on its group (comm_match checks they agree).
    coll_peers_.resize(p_.size());
    for (int r = 0; r < w; ++r) coll_peers_[size_t(r)].resize(p_[size_t(r)].size());
    for (const auto& [group, per_rank] : colls)
      for (int r = 0; r < w; ++r)
        for (size_t k = 0; k < per_rank[size_t(r)].size(); ++k)
          for (int q = 0; q < w; ++q)
            if (!per_rank[size_t(q)].empty()) {
              if (k >= per_rank[size_t(q)].size()) return false;
              coll_peers_[size_t(r)][size_t(per_rank[size_t(r)][k])].emplace_back(q, per_rank[size_t(q)][k]);
            }
    return true;
  }

  // Runs every rank as far as it can with `rendezvous` sends; returns, per
  // rank, the step it is blocked at (its size: it reached its end).
  std::vector<int> run(const std::vector<std::vector<bool>>& rendezvous) {
    const size_t w = p_.size();
    std::vector<std::vector<char>> posted(w);
    for (size_t r = 0; r < w; ++r) posted[r].assign(p_[r].size(), 0);
    auto complete = [&](size_t r, int i) {
      const CommStep& c = p_[r][size_t(i)];
      const int other = partner_[r][size_t(i)];
      switch (c.kind) {
        case Kind::send: return !rendezvous[r][size_t(i)] || posted[size_t(c.peer)][size_t(other)] != 0;
        case Kind::recv: return posted[size_t(c.peer)][size_t(other)] != 0;
        case Kind::collective:
          for (const auto& [q, j] : coll_peers_[r][size_t(i)])
            if (!posted[size_t(q)][size_t(j)]) return false;
          return true;
        default: return true;
      }
    };
    std::vector<int> pc(w, 0);
    for (bool moved = true; moved;) {
      moved = false;
      for (size_t r = 0; r < w; ++r) {
        auto& steps = p_[r];
        while (pc[r] < int(steps.size())) {
          const CommStep& c = steps[size_t(pc[r])];
          if (c.kind == Kind::wait) {
            if (c.target >= 0 && !complete(r, c.target)) break;
          } else if (!posted[r][size_t(pc[r])]) {
            posted[r][size_t(pc[r])] = 1;
            moved = true;
            if (c.kind == Kind::collective && c.blocks && !complete(r, pc[r])) break;
          } else if (c.kind == Kind::collective && c.blocks && !complete(r, pc[r])) {
            break;
          }
          ++pc[r];
          moved = true;
        }
      }
    }
    return pc;
  }

  // The matching step on the peer of send/recv step i of rank r (after match()).
  int partner(int r, int i) const { return partner_[size_t(r)][size_t(i)]; }

 private:
  const std::vector<std::vector<CommStep>>& p_;
  std::vector<std::vector<int>> partner_;  // per rank, per send/recv step: the matching step on the peer
  std::vector<std::vector<std::vector<std::pair<int, int>>>> coll_peers_;  // per rank, per collective step
};

}  // namespace

std::vector<std::vector<bool>> choose_rendezvous_sends(const std::vector<std::vector<CommStep>>& by_rank) {
  Simulation sim(by_rank);
  if (!sim.match()) return {};
  // Every send whose data moves once (one end direct) starts rendezvous.
  std::vector<std::vector<bool>> chosen(by_rank.size());
  for (size_t r = 0; r < by_rank.size(); ++r) {
    chosen[r].assign(by_rank[r].size(), false);
    for (size_t i = 0; i < by_rank[r].size(); ++i) {
      const CommStep& c = by_rank[r][i];
      if (c.kind == Kind::send)
        chosen[r][i] = c.direct || by_rank[size_t(c.peer)][size_t(sim.partner(int(r), int(i)))].direct;
    }
  }
  for (;;) {
    const auto pc = sim.run(chosen);
    bool all_done = true, relaxed = false;
    for (size_t r = 0; r < by_rank.size(); ++r) {
      if (pc[r] == int(by_rank[r].size())) continue;
      all_done = false;
      const CommStep& at = by_rank[r][size_t(pc[r])];
      if (at.kind == Kind::wait && at.target >= 0 && chosen[r][size_t(at.target)]) {
        chosen[r][size_t(at.target)] = false;  // blocked on it: eager again
        relaxed = true;
      }
    }
    if (all_done) return chosen;
    if (!relaxed) {  // blocked with every blocking send eager: the program hangs anyway; change nothing
      for (auto& v : chosen) v.assign(v.size(), false);
      return chosen;
    }
  }
}

void plan_rendezvous_sends(ir::Graph& g) {
  if (!dist::is_initialized() || dist::world().size() == 1 || !g.exec_plan()) return;
  const auto mine = comm_steps_of(g);
  std::vector<std::vector<CommStep>> by_rank;
  for (const auto& text : dist::all_gather_text(serialize(mine), "rendezvous sends"))
    by_rank.push_back(deserialize_steps(text));
  const auto chosen = choose_rendezvous_sends(by_rank);
  if (chosen.empty()) return;  // the exec_plan pass's choice stands
  const auto& flags = chosen[size_t(dist::world().rank())];
  auto plan = std::make_unique<ir::ExecPlan>(*g.exec_plan());
  for (auto& s : plan->instructions)
    if (s.kind == ir::InstrKind::p2p) s.rendezvous.clear();
  for (size_t i = 0; i < mine.size(); ++i) {
    if (mine[i].kind != Kind::send) continue;
    auto& r = plan->instructions[size_t(mine[i].instruction)].rendezvous;
    if (r.size() <= size_t(mine[i].entry)) r.resize(size_t(mine[i].entry) + 1, false);
    r[size_t(mine[i].entry)] = flags[i];
  }
  g.set_exec_plan(std::move(plan));
}

}  // namespace symmflow::exec
