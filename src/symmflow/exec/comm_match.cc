#include "symmflow/exec/comm_match.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <tuple>

#include "symmflow/ir/comm_ops.h"
#include "symmflow/ir/parser.h"
#include "symmflow/runtime/shm/wait.h"
#include "symmflow/runtime/world.h"

namespace symmflow::exec {

namespace {

std::vector<std::string> strings(const ir::Arg& a) {
  if (a.kind != ir::Arg::Kind::List) return a.constant.to_string_list();
  std::vector<std::string> out;
  for (const auto& e : a.elems) out.push_back(e.constant.to_string());
  return out;
}

const ir::Arg& arg(const ir::Node& n, const char* name) { return n.arg(*n.schema().argument_index(name)); }

std::string describe(const CommOp& o) {
  switch (o.kind) {
    case CommOp::Kind::send:
      return fmt::format("send to rank {} (tag {}, {}, {} bytes) at {}", o.peer, o.tag, dtype_name(o.dtype), o.bytes,
                         o.where);
    case CommOp::Kind::recv:
      return fmt::format("receive from rank {} (tag {}, {}, {} bytes) at {}", o.peer, o.tag, dtype_name(o.dtype),
                         o.bytes, o.where);
    case CommOp::Kind::collective:
      return fmt::format("{} ({}, {} bytes) at {}", o.op, dtype_name(o.dtype), o.bytes, o.where);
  }
  return "?";
}

}  // namespace

std::vector<CommOp> comm_ops_of(const ir::Graph& g) {
  std::vector<CommOp> out;
  const std::string file = g.file().empty() ? "<graph>" : g.file();
  for (const ir::Node* n : g.nodes()) {
    const auto kind = ir::comm_kind(*n);
    if (kind != ir::CommKind::p2p && kind != ir::CommKind::collective && !ir::is_symm_mem_collective(*n)) continue;
    // A traced program has no lines: its ops are named by their place.
    const std::string where = n->loc().line > 0 ? fmt::format("{}:{}:{}", file, n->loc().line, n->loc().col)
                                                : fmt::format("{}: op {} of @{}", file, g.position(n) + 1, g.name());
    const std::string group = ir::group_of(*n);
    int entry = 0;
    auto add = [&](CommOp::Kind k, const ir::Value* t, int peer, int64_t tag) {
      out.push_back({k, peer, tag, t->type().dtype, t->type().nbytes(), n->op_name(), group, where,
                     int(g.position(n)), entry++, t});
    };
    const auto& name = n->schema().name;
    if (name == "isend") {
      add(CommOp::Kind::send, arg(*n, "input").value, int(arg(*n, "dst").constant.to_int()), arg(*n, "tag").constant.to_int());
    } else if (name == "irecv_") {
      add(CommOp::Kind::recv, arg(*n, "out").value, int(arg(*n, "src").constant.to_int()), arg(*n, "tag").constant.to_int());
    } else if (name == "batch_isend_irecv") {
      const auto types = strings(arg(*n, "op_types"));
      const auto peers = ir::int_list_at(arg(*n, "peers"), g.rank(), g.world());
      const auto tags = ir::int_list_at(arg(*n, "tags"), g.rank(), g.world());
      const auto& tensors = arg(*n, "tensors");
      for (size_t i = 0; i < types.size(); ++i)
        add(types[i] == "isend" ? CommOp::Kind::send : CommOp::Kind::recv, tensors.elems.at(i).value,
            int(peers.at(i)), tags.at(i));
    } else {
      // A collective: what its tensors hold (the largest one), as the runtime
      // would see it on every rank.
      const ir::Value* biggest = nullptr;
      for (const auto& a : n->args())
        a.for_each_value([&](ir::Value* v) {
          if (v->is_tensor() && (!biggest || v->type().nbytes() > biggest->type().nbytes())) biggest = v;
        });
      if (biggest) add(CommOp::Kind::collective, biggest, -1, 0);
    }
  }
  return out;
}

std::string serialize(const std::vector<CommOp>& ops) {
  std::string s;
  for (const auto& o : ops)
    s += fmt::format("{} {} {} {} {} {} {} {}\n", int(o.kind), o.peer, o.tag, int(o.dtype), o.bytes, o.op, o.group,
                     o.where);
  return s;
}

std::vector<CommOp> deserialize(const std::string& text) {
  std::vector<CommOp> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::istringstream l(line);
    CommOp o;
    int kind = 0, dtype = 0;
    l >> kind >> o.peer >> o.tag >> dtype >> o.bytes >> o.op >> o.group;
    std::getline(l >> std::ws, o.where);  // a file name may hold spaces
    o.kind = CommOp::Kind(kind);
    o.dtype = DType(dtype);
    out.push_back(std::move(o));
  }
  return out;
}

std::string first_mismatch(const std::vector<std::vector<CommOp>>& by_rank) {
  const int w = int(by_rank.size());
  // P2P channels on the world: (src, dst, tag) -> the sends and receives, in order.
  using Channel = std::tuple<int, int, int64_t>;
  std::map<Channel, std::vector<const CommOp*>> sends, recvs;
  for (int r = 0; r < w; ++r)
    for (const auto& o : by_rank[size_t(r)]) {
      if (o.group != "world" || o.kind == CommOp::Kind::collective) continue;
      if (o.peer < 0 || o.peer >= w)
        return fmt::format("rank {}'s {} names rank {}, but the world has {} rank{}", r, describe(o), o.peer, w,
                           w == 1 ? "" : "s");
      if (o.kind == CommOp::Kind::send) sends[{r, o.peer, o.tag}].push_back(&o);
      else recvs[{o.peer, r, o.tag}].push_back(&o);
    }
  auto channel_text = [](const std::vector<const CommOp*>* ops) {
    return !ops || ops->empty() ? std::string("nothing") : fmt::format("{} op{}", ops->size(), ops->size() == 1 ? "" : "s");
  };
  std::map<Channel, bool> seen;
  for (const auto* table : {&sends, &recvs})
    for (const auto& [ch, list] : *table) {
      if (seen[ch]) continue;
      seen[ch] = true;
      const auto [src, dst, tag] = ch;
      auto si = sends.find(ch);
      auto ri = recvs.find(ch);
      const std::vector<const CommOp*>* s = si == sends.end() ? nullptr : &si->second;
      const std::vector<const CommOp*>* rv = ri == recvs.end() ? nullptr : &ri->second;
      const size_t ns = s ? s->size() : 0, nr = rv ? rv->size() : 0;
      for (size_t k = 0; k < std::min(ns, nr); ++k) {
        const CommOp& a = *(*s)[k];
        const CommOp& b = *(*rv)[k];
        if (a.bytes != b.bytes || a.dtype != b.dtype)
          return fmt::format("rank {}'s send #{} ({}) is received by rank {}'s {}: {} differ", src, k + 1,
                             describe(a), dst, describe(b), a.dtype != b.dtype ? "the dtypes" : "the sizes");
      }
      if (ns > nr)
        return fmt::format("rank {}'s send #{} ({}) has no matching receive on rank {} (rank {} receives {} from "
                           "rank {} with tag {}{})",
                           src, nr + 1, describe(*(*s)[nr]), dst, dst, channel_text(rv), src, tag,
                           nr ? fmt::format("; its last is the {}", describe(*rv->back())) : "");
      if (nr > ns)
        return fmt::format("rank {}'s receive #{} ({}) has no matching send on rank {} (rank {} sends {} to rank {} "
                           "with tag {}{})",
                           dst, ns + 1, describe(*(*rv)[ns]), src, src, channel_text(s), dst, tag,
                           ns ? fmt::format("; its last is the {}", describe(*s->back())) : "");
    }
  // Collectives: per group, every rank that issues any issues the same sequence.
  std::map<std::string, std::vector<std::pair<int, std::vector<const CommOp*>>>> groups;
  for (int r = 0; r < w; ++r) {
    std::map<std::string, std::vector<const CommOp*>> mine;
    for (const auto& o : by_rank[size_t(r)])
      if (o.kind == CommOp::Kind::collective) mine[o.group].push_back(&o);
    if (!mine.count("world")) mine["world"];  // every rank is in the world, collectives or not
    for (auto& [name, list] : mine) groups[name].emplace_back(r, std::move(list));
  }
  for (const auto& [name, ranks] : groups) {
    const auto& [r0, first] = ranks.front();
    for (size_t i = 1; i < ranks.size(); ++i) {
      const auto& [r, list] = ranks[i];
      for (size_t k = 0; k < std::max(first.size(), list.size()); ++k) {
        const CommOp* a = k < first.size() ? first[k] : nullptr;
        const CommOp* b = k < list.size() ? list[k] : nullptr;
        if (a && b && a->op == b->op && a->dtype == b->dtype && a->bytes == b->bytes) continue;
        auto text = [](const CommOp* o) { return o ? describe(*o) : std::string("no collective (its sequence ends)"); };
        return fmt::format("collective #{} on group '{}' differs: rank {} issues {}, rank {} issues {}", k + 1, name,
                           r0, text(a), r, text(b));
      }
    }
  }
  return "";
}

void match_communication(const ir::Graph& g) {
  if (!dist::is_initialized()) return;
  std::vector<std::vector<CommOp>> by_rank;
  if (dist::world().size() == 1) {
    by_rank.push_back(comm_ops_of(g));  // self-sends still need their receives
  } else {
    for (const auto& text : dist::all_gather_text(serialize(comm_ops_of(g)), "comm_match")) by_rank.push_back(deserialize(text));
  }
  const std::string why = first_mismatch(by_rank);
  // The job's communication is broken: what a rank sent before (a traced
  // function's eager send) is not also reported as unmatched at teardown.
  if (!why.empty()) runtime::note_comm_failure();
  if (!why.empty())
    throw ir::ParseError(fmt::format("@{}: communication does not match across ranks: {}; nothing has run (every rank "
                            "stops here)",
                            g.name(), why));
}

}  // namespace symmflow::exec
