// The two engines that own asynchronous operations of a group, P2P
// (p2p/engine) and collectives (collectives/coll_queue), drive each other
// while one of them waits: MPI's progress rule. Without it a rank waiting for
// a collective would never answer a peer's pending send, and a rank waiting for
// a receive would never take the next step of a collective that a peer waits
// on, and both would hang.
//
// Both sleep on the rank's one wake word of the group segment, which every
// signal and every P2P event notifies, so a sleeping waiter wakes for either.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace symmflow::dist {
class ProcessGroup;
}

namespace symmflow::dist::detail {

// P2P: one pass of progress; whether any operation is pending; a counter that
// moves whenever pending P2P operations may progress.
void p2p_progress(ProcessGroup& g);
// P2P operations posted and not complete in this process, all groups: lets a
// collective skip the group's P2P engine (a hash lookup) when nothing is pending.
extern size_t p2p_ops_in_flight;
bool p2p_pending(ProcessGroup& g);
uint64_t p2p_activity(ProcessGroup& g);
// At teardown: the group's sends that no receive matched (P2PEngine::
// unmatched_sends), "" when none or when the group never used P2P.
std::string p2p_unmatched(ProcessGroup& g);

// Collectives in flight: resume what can resume (in issue order); whether any
// is pending; whether the oldest one could take a step now.
void coll_progress(ProcessGroup& g);
bool coll_pending(ProcessGroup& g);
bool coll_ready(ProcessGroup& g);

}  // namespace symmflow::dist::detail
