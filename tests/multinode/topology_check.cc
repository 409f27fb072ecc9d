// sf_topology_check: what the mpi backend promises about nodes, run under
// mpirun (tests/multinode/mpi_tests.sh, mode `topology`):
//   --nodes N   the number of nodes the job must see
//   --rpn K     ranks per node, consecutive (SYMMFLOW_RANKS_PER_NODE or real hosts)
//   --mismatch  instead: node 0 calls all_reduce_ while the other nodes call
//               all_gather; every leader must fail naming both calls (the
//               job then ends non-zero; mpi_tests.sh checks the message)
// Checks, on every rank: the backend, the node numbering, peer_ptr non-null
// exactly for peers on the same node (and usable: a store through it is seen
// by the peer), signals() refused on a group that spans nodes, node_group(),
// net(), and a subgroup inside one node that needs no network. Then the
// c10d:: and symm_mem:: ops through the dispatcher, across the nodes (the ops
// layer must work unchanged on the mpi backend), and errors between nodes
// that name the ranks (a short message, a tag beyond MPI's range). Prints `topology ok rank R
// node K` and exits 0, or names the first broken promise.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "symmflow/kernels/copy.h"
#include "symmflow/kernels/factories.h"
#include "symmflow/library/dispatcher.h"
#include "symmflow/ops/work_registry.h"
#include "symmflow/runtime/copy_stats.h"
#include "symmflow/runtime/process_group_internal.h"  // net(): a transport internal
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

sf::IValue call1(std::string_view name, std::vector<sf::IValue> args) {
  sf::OpContext ctx(sf::DispatchKey::CPU);
  auto r = sf::Dispatcher::instance().call(name, ctx, args);
  return r.empty() ? sf::IValue() : r[0];
}

sf::Tensor iota_plus(int64_t n, float base) {
  sf::Tensor t = sf::Tensor::empty({n}, sf::DType::f32);
  for (int64_t i = 0; i < n; ++i) t.data<float>()[i] = base + float(i);
  return t;
}

// The ops layer over a world that spans nodes: every value is exact.
int check_ops(int me, int W) {
  sf::Tensor x = iota_plus(10, float(me));
  sf::Tensor y = call1("c10d::wait_tensor", {call1("c10d::all_reduce", {x, "sum", "world"})}).to_tensor();
  for (int i = 0; i < 10; ++i)
    EXPECT(y.data<float>()[i] == float(W * i + W * (W - 1) / 2), "c10d::all_reduce[{}] = {}", i,
           y.data<float>()[i]);
  sf::Tensor row = iota_plus(3, float(10 * me));
  sf::Tensor g = call1("c10d::all_gather_into_tensor", {row, W, "world"}).to_tensor();
  for (int p = 0; p < W; ++p)
    EXPECT(g.data<float>()[3 * p + 1] == float(10 * p + 1), "all_gather_into_tensor piece {}", p);
  sf::Tensor a2a = iota_plus(W, float(100 * me));
  sf::Tensor got = call1("c10d::all_to_all_single",
                         {a2a, std::vector<int64_t>{}, std::vector<int64_t>{}, "world"}).to_tensor();
  for (int i = 0; i < W; ++i)
    EXPECT(got.data<float>()[i] == float(100 * i + me), "all_to_all_single[{}]", i);
  // A ring across the nodes, received into a view, through batch_isend_irecv.
  const int64_t nxt = (me + 1) % W, prv = (me - 1 + W) % W;
  sf::Tensor base = sf::kernels::zeros({4, 8});
  sf::Tensor recv_row = call1("aten::select", {base, 0, 2}).to_tensor();
  auto res = call1("c10d::batch_isend_irecv",
                   {std::vector<std::string>{"isend", "irecv"}, std::vector<int64_t>{nxt, prv},
                    std::vector<int64_t>{5, 5}, std::vector<sf::Tensor>{iota_plus(8, float(me * 100)), recv_row},
                    "world"}).to_tensor_list();
  call1("c10d::wait_tensor", {res[0]});
  call1("c10d::wait_tensor", {res[1]});
  EXPECT(sf::ops::pending_work_count() == 0, "works left behind");
  for (int i = 0; i < 8; ++i)
    EXPECT(base.data<float>()[2 * 8 + i] == float(prv * 100 + i), "ring recv[{}]", i);
  // symm_mem ops: symmetric input, no staged copy, the aliased in-place form.
  sf::Tensor s = sf::symm::empty({16}, sf::DType::f32);
  sf::kernels::copy_(s, iota_plus(16, float(me)));
  dist::reset_staged_copy_stats();
  sf::Tensor o = call1("symm_mem::one_shot_all_reduce", {s, "sum", "world"}).to_tensor();
  EXPECT(dist::staged_copy_stats().bytes == 0, "one_shot_all_reduce on a symmetric input copied {} bytes",
         dist::staged_copy_stats().bytes);
  EXPECT(o.data<float>()[1] == float(W + W * (W - 1) / 2), "one_shot_all_reduce {}", o.data<float>()[1]);
  EXPECT(call1("symm_mem::two_shot_all_reduce_", {s, "sum", "world"}).to_tensor().is_same(s), "alias");
  EXPECT(s.data<float>()[1] == float(W + W * (W - 1) / 2), "two_shot_all_reduce_ {}",
         s.data<float>()[1]);
  return 0;
}

// Errors between nodes name the ranks instead of hanging: a receive that
// expects more bytes than were sent, and a tag outside MPI's range.
int check_net_errors(int me, int W, int rpn) {
  auto& w = dist::world();
  // Pairs across the first two nodes: rank p of node 0 with rank p + rpn.
  const bool in_pair = W > rpn && (me < rpn ? me + rpn < W : me < 2 * rpn);
  if (in_pair) {
    const int peer = me < rpn ? me + rpn : me - rpn;
    if (me < rpn) {
      dist::isend(w, iota_plus(4, 0), peer, 9).wait();
    } else {
      sf::Tensor big = sf::Tensor::empty({8}, sf::DType::f32);
      std::string msg;
      try {
        dist::irecv(w, big, peer, 9).wait();
      } catch (const sf::Error& e) {
        msg = e.what();
      }
      EXPECT(msg.find("size mismatch") != std::string::npos &&
                 msg.find(fmt::format("rank {} sent 16 bytes", peer)) != std::string::npos,
             "a short message across nodes gave: '{}'", msg);
    }
    std::string msg;
    try {
      dist::isend(w, iota_plus(1, 0), peer, 1 << 30);
    } catch (const sf::Error& e) {
      msg = e.what();
    }
    EXPECT(msg.find("outside MPI's") != std::string::npos, "a huge tag across nodes gave: '{}'", msg);
  }
  w.barrier("net errors");
  return 0;
}

int main(int argc, char** argv) {
  int nodes = -1, rpn = -1;
  bool mismatch = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--mismatch")) mismatch = true;
    else if (!std::strcmp(argv[i], "--nodes") && i + 1 < argc) nodes = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--rpn") && i + 1 < argc) rpn = std::atoi(argv[++i]);
  }
  if (nodes < 1 || rpn < 1) {
    std::fprintf(stderr, "usage: sf_topology_check --nodes N --rpn K (under mpirun)\n");
    return 2;
  }
  dist::init();
  auto& w = dist::world();
  const int me = w.rank(), W = w.size();
  if (mismatch) {
    sf::Tensor x = sf::symm::empty({W * 16}, sf::DType::f32);
    sf::Tensor y = sf::symm::empty({16}, sf::DType::f32);
    sf::kernels::fill_(x, sf::Scalar(1.0));
    sf::kernels::fill_(y, sf::Scalar(1.0));
    try {
      if (w.node() == 0) dist::all_reduce_(w, x, dist::ReduceOp::sum);
      else dist::all_gather(w, x, y);
    } catch (const sf::Error& e) {
      std::fprintf(stderr, "rank %d: %s\n", me, e.what());
      return 3;
    }
    std::fprintf(stderr, "rank %d: mismatched collectives were not detected\n", me);
    return 4;
  }
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
  EXPECT((dist::detail::GroupAccess::net(w) != nullptr) == (nodes > 1), "net {}",
         (void*)dist::detail::GroupAccess::net(w));
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
  if (a) EXPECT(!a->spans_nodes() && dist::detail::GroupAccess::net(*a) == nullptr, "first-node group spans nodes");
  if (b) EXPECT(b->num_nodes() == nodes && b->node_group().size() == 1, "leaders group: {} nodes",
                b->num_nodes());
  if (int rc = check_ops(me, W)) return rc;
  if (int rc = check_net_errors(me, W, rpn)) return rc;
  w.barrier("topology done");
  std::printf("topology ok rank %d node %d\n", me, w.node());
  return 0;
}
