#include "symmflow/passes/collective_lowering.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "symmflow/core/overlap.h"
#include "symmflow/core/params.h"
#include "symmflow/ir/alias.h"
#include "symmflow/ir/comm_ops.h"
#include "symmflow/runtime/collectives/collectives.h"

namespace symmflow::passes {

// SYMMFLOW_TUNE_FILE, default $HOME/.cache/symmflow/tune.json (./.cache/... without HOME).
std::string tune_file_path() { return params::text("SYMMFLOW_TUNE_FILE"); }

std::optional<size_t> tuned_one_shot_max_bytes(int world, const std::string& path) {
  if (!std::filesystem::exists(path)) return std::nullopt;
  std::ifstream f(path);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(f);
  } catch (const std::exception& e) {
    throw Error(fmt::format("{}: not a symmflow tune file ({}); rerun `symmflow tune` or remove it", path, e.what()));
  }
  auto it = j.find("one_shot_max_bytes");
  if (it == j.end() || !it->is_object())
    throw Error(fmt::format("{}: expected an object \"one_shot_max_bytes\" keyed by world size", path));
  auto e = it->find(std::to_string(world));
  if (e == it->end()) return std::nullopt;
  return e->get<size_t>();
}

size_t one_shot_max_bytes(int world, std::string* source) {
  std::string path = tune_file_path();
  if (auto t = tuned_one_shot_max_bytes(world, path)) {
    if (source) *source = path;
    return *t;
  }
  if (source) *source = "runtime default (SYMMFLOW_ONE_SHOT_MAX_BYTES)";
  return dist::thresholds().one_shot_max_bytes;
}

namespace {

bool is_all_reduce(const ir::Node& n) {
  const auto& s = n.schema();
  return s.ns == "c10d" && (s.name == "all_reduce" || s.name == "all_reduce_" || s.name == "all_reduce_coalesced" ||
                            s.name == "all_reduce_coalesced_");
}

// symm_mem ops whose kernel copies by definition, whatever the placement:
// the copy-in one-shot forms copy local_input into symm_buffer, two_shot with
// an output reduces in place and copies the result out, reduce_scatter_out
// along the last dim makes the chunks leading with one copy. The runtime
// counts those copies as staged; the label says so too.
bool copies_by_definition(const ir::Node& n) {
  const std::string& name = n.schema().name;
  if (name == "one_shot_all_reduce_copy" || name == "one_shot_all_reduce_copy_out" ||
      name == "two_shot_all_reduce_out")
    return true;
  if (name != "reduce_scatter_out") return false;
  const ir::Arg& split = n.arg(2);
  return split.kind != ir::Arg::Kind::Const || !split.constant.is_bool() || split.constant.to_bool();
}

// Whether the runtime's tile_reduce reads or writes a tile in place, row by
// row (core/overlap.h's rows_in_place, the rule the runtime itself asks). Any
// other tile (a column, a transposed tile) is packed aside on the root, and
// on every rank under the pull protocol, and those copies are counted.
bool tile_rows_in_place(const ir::TensorType& t) { return t.strides.empty() || rows_in_place(t.sizes, t.strides); }

}  // namespace

bool CollectiveLowering::run(ir::Graph& g) {
  auto roots = ir::storage_roots(g);
  auto symmetric = [&](const ir::Value* v) { return roots[size_t(v->id())] && roots[size_t(v->id())]->symmetric(); };
  const size_t threshold = one_shot_max_bytes(g.world());
  bool changed = false;
  for (ir::Node* n : g.nodes()) {
    const auto& s = n->schema();
    ir::Algorithm algo = ir::Algorithm::none;
    if (s.ns == "symm_mem") {
      if (copies_by_definition(*n)) algo = ir::Algorithm::staged;
      else if (s.name == "tile_reduce" &&
               (!tile_rows_in_place(n->arg(0).value->type()) || !tile_rows_in_place(n->arg(1).value->type())))
        algo = ir::Algorithm::staged;
      else if (s.name.find("all_reduce") == std::string::npos) algo = ir::Algorithm::direct;
      else algo = s.name.find("two_shot") != std::string::npos ? ir::Algorithm::two_shot : ir::Algorithm::one_shot;
    } else if (s.ns == "c10d" && s.name != "wait_tensor") {
      bool all_symmetric = true;
      int64_t bytes = 0;
      // P2P: a receive buffer must be symmetric (a peer writes it); a send
      // buffer need not be, when the runtime moves it once into the peer's
      // symmetric receive buffer: a contiguous view of a graph input (halo2d's
      // owned rows, ring_overlap's %x0), or any send that is rendezvous with
      // the peer's receive (ring_overlap's %a, a compute result, into the
      // peer's %y1), as the executable plan will run it.
      const std::vector<ir::Value*> received = ir::receive_buffers(*n);
      const bool p2p = ir::comm_kind(*n) == ir::CommKind::p2p;
      std::vector<const ir::Value*> rendezvous;
      if (p2p) {
        const std::vector<bool> rv = ir::rendezvous_sends(g, *n, roots);
        size_t entry = 0;
        if (!rv.empty())
          n->arg(3).for_each_value([&](const ir::Value* v) {
            if (rv[entry++]) rendezvous.push_back(v);
          });
      }
      for (const auto& a : n->args())
        a.for_each_value([&](ir::Value* v) {
          if (!v->is_tensor()) return;
          const bool sent = p2p && std::find(received.begin(), received.end(), v) == received.end();
          const bool moves_once = ir::moves_without_staging(*v, roots) ||
                                  std::find(rendezvous.begin(), rendezvous.end(), v) != rendezvous.end();
          // A P2P buffer moves direct only when the peer can address it in
          // place (ir::p2p_addressable: a row, a column; not any layout); a
          // collective's only as one run of bytes (the runtime stages a
          // strided view of a symmetric buffer through a contiguous one).
          const bool in_place = p2p ? ir::p2p_addressable(v->type()) : ir::one_run(v->type());
          all_symmetric &= (symmetric(v) && in_place) || (sent && moves_once);
          bytes = std::max(bytes, v->type().nbytes());
        });
      if (!all_symmetric) algo = ir::Algorithm::staged;
      else if (!is_all_reduce(*n)) algo = ir::Algorithm::direct;
      else algo = g.world() <= 1 || size_t(bytes) <= threshold ? ir::Algorithm::one_shot : ir::Algorithm::two_shot;
    }
    if (algo != ir::Algorithm::none && algo != n->algorithm()) {
      n->set_algorithm(algo);
      changed = true;
    }
  }
  return changed;
}

}  // namespace symmflow::passes
