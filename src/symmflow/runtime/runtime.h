// The runtime in one include, for runtime-level users: launcher, world and
// groups, backend, symmetric heap, signal pads (SignalPad complete, so
// ProcessGroup::signals() is usable), symmetric tensors, collectives, P2P.
// It is more than symmflow/symmflow.h, the user's include, which leaves the
// low-level pieces out; neither exposes the group's internals (segment,
// network link, extensions: runtime/process_group_internal.h). See
// docs/runtime.md.
//
//   #include "symmflow/runtime/runtime.h"
//   using namespace symmflow;
//
//   int main() {                       // run with: symmflow launch --nproc 2 -- ./prog
//     dist::init();
//     auto& g = dist::world();
//     Tensor buf = symm::empty({1024}, DType::f32);      // same offset on every rank
//     int peer = (g.rank() + 1) % g.size();
//     float one = 1.0f;
//     g.signals().put_with_signal(buf.storage()->peer_ptr(peer), &one, 4, peer, 1);
//     g.signals().wait_next((g.rank() + g.size() - 1) % g.size(), 1, "example");
//     g.barrier();
//   }
#pragma once
#include "symmflow/runtime/backend.h"
#include "symmflow/runtime/collectives/collectives.h"
#include "symmflow/runtime/copy_stats.h"
#include "symmflow/runtime/launcher.h"
#include "symmflow/runtime/p2p/p2p.h"
#include "symmflow/runtime/process_group.h"
#include "symmflow/runtime/shm/signal_pad.h"
#include "symmflow/runtime/symm.h"
#include "symmflow/runtime/symmetric_heap.h"
#include "symmflow/runtime/world.h"
