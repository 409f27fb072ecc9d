// sf_topology_check: what the mpi backend promises about nodes, run under
// mpirun (tests/multinode/mpi_tests.sh, mode `topology`):
//   --nodes N   the number of nodes the job must see
//   --rpn K     ranks per node, consecutive (SYMMFLOW_RANKS_PER_NODE or real hosts)
// Checks, on every rank: the backend, the node numbering, peer_ptr non-null
// exactly for peers on the same node (and usable: a store through it is seen
// by the peer), signals() refused on a group that spans nodes, node_group(),
// net(), and a subgroup inside one node that needs no network. Prints
// `topology ok rank R node K` and exits 0, or names the first broken promise.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "symmflow/symmflow.h"

namespace sf = symmflow;
namespace dist = symmflow::dist;

#define EXPECT(cond, ...)                                                          \
  do {                                                                             \
    if (!(cond)) {                                                                 \
      std::fprintf(stderr, "topology check failed on rank %d: %s: %s\n", me, #cond, \
                   fmt::format(__VA_ARGS__).c_str());                              \
      return 1;                                                                    \
    }                                                                              \
  } while (0)

int main(int argc, char** argv) {
  int nodes = -1, rpn = -1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--nodes")) nodes = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--rpn")) rpn = std::atoi(argv[i + 1]);
  }
  if (nodes < 1 || rpn < 1) {
    std::fprintf(stderr, "usage: sf_topology_check --nodes N --rpn K (under mpirun)\n");
    return 2;
  }
  dist::init();
  auto& w = dist::world();
  const int me = w.rank(), W = w.size();
  EXPECT(dist::backend().name() == "mpi", "backend {}", dist::backend().name());
  EXPECT(w.num_nodes() == nodes && dist::backend().num_nodes() == nodes, "{} nodes, expected {}",
         w.num_nodes(), nodes);
  EXPECT(w.spans_nodes() == (nodes > 1), "spans_nodes {}", w.spans_nodes());
  for (int p = 0; p < W; ++p) {
    EXPECT(w.node_of(p) == p / rpn, "rank {} on node {}, expected {}", p, w.node_of(p), p / rpn);
    EXPECT(w.is_shm_reachable(p) == (p / rpn == me / rpn), "rank {} reachable {}", p,
           w.is_shm_reachable(p));
  }
  // peer_ptr: an address for the node's ranks, nullptr for the others.
  sf::Tensor t = sf::symm::empty({16}, sf::DType::i32);
  auto* mine = static_cast<int32_t*>(t.data_ptr());
  for (int i = 0; i < 16; ++i) mine[i] = -1;
  w.barrier("topology fill");
  for (int p = 0; p < W; ++p) {
    void* pp = t.storage()->peer_ptr(p);
    EXPECT((pp != nullptr) == (p / rpn == me / rpn), "peer_ptr({}) = {}", p, pp);
    if (pp && p != me) static_cast<int32_t*>(pp)[me % 16] = me;  // a store the peer must see
  }
  w.barrier("topology stores");
  for (int p = 0; p < W; ++p)
    if (p / rpn == me / rpn && p != me)
      EXPECT(mine[p % 16] == p, "slot {} holds {}, expected rank {}'s store", p % 16, mine[p % 16], p);
  // The node view and the link.
  EXPECT(w.node_group().size() == std::min(rpn, W - me / rpn * rpn), "node group of {} ranks",
         w.node_group().size());
  EXPECT(w.node_group().rank() == me % rpn, "node group rank {}", w.node_group().rank());
  EXPECT((w.net() != nullptr) == (nodes > 1), "net {}", (void*)w.net());
  if (nodes > 1) {
    bool refused = false;
    try {
      (void)w.signals();
    } catch (const sf::Error& e) {
      refused = std::string(e.what()).find("spans") != std::string::npos;
    }
    EXPECT(refused, "signals() of a group spanning nodes was not refused");
  }
  // A group inside the first node needs no network; a group of the first
  // rank of every node spans them all.
  std::vector<int> first_node, leaders;
  for (int p = 0; p < std::min(rpn, W); ++p) first_node.push_back(p);
  for (int p = 0; p < W; p += rpn) leaders.push_back(p);
  dist::ProcessGroup* a = dist::new_group(first_node, "topo-first-node");
  dist::ProcessGroup* b = dist::new_group(leaders, "topo-leaders");
  if (a) EXPECT(!a->spans_nodes() && a->net() == nullptr, "first-node group spans nodes");
  if (b) EXPECT(b->num_nodes() == nodes && b->node_group().size() == 1, "leaders group: {} nodes",
                b->num_nodes());
  w.barrier("topology done");
  std::printf("topology ok rank %d node %d\n", me, w.node());
  return 0;
}
