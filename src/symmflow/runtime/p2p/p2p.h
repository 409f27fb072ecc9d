// Point-to-point over a ProcessGroup: isend / irecv / batch_isend_irecv with tags
// and Work handles. Sends and receives between two ranks match in program order
// per (peer, tag), like MPI; a peer equal to the own rank is a legal self-send.
//
// Transfer protocol (shm backend, p2p/engine.h): the receiver posts a receive
// that says its buffer is free (and where it is, when it is symmetric); a sender
// that has the post
// - puts the data straight into the receiver's symmetric buffer (one-sided put,
//   zero copy) and signals completion, or
// - when the receive buffer is not symmetric but the send buffer is, signals that
//   its data is ready and the receiver gets it from the sender's buffer, or
// - otherwise goes through the pair's staged mailbox in the group segment (counted
//   in copy_stats.h).
// A send of at most runtime::kEagerMaxBytes whose receive post has not arrived
// goes eager (while the pair has a free slot: runtime::kEagerSlots): copied
// into a slot of the pair's block at once, taken out by the receiver when it
// posts (counted in copy_stats.h too). Its Work completes as soon as the data
// is in the slot, as MPI's eager sends do: the send buffer may be reused at
// once, and a rank may wait on such a send before posting its receive. So a
// size mismatch of an eager message is reported by the receiver only (its
// Work fails; the sender's completed without error). Rendezvous sizes
// mismatches fail both Works.
// Send and receive buffers may be views (any strides).
//
// Progress: isend/irecv never block. Work::wait() drives every pending operation
// of this process until its own completes, so rings (everyone sends, then everyone
// receives) cannot deadlock. A send buffer must not be written, and a receive
// buffer must not be read, before its Work completed.
//
//   auto w = dist::batch_isend_irecv(g, {dist::P2POp::send(x, next), dist::P2POp::recv(y, prev)});
//   for (auto& x : w) x.wait();
#pragma once
#include <vector>

#include "symmflow/core/tensor.h"
#include "symmflow/runtime/process_group.h"
#include "symmflow/runtime/work.h"

namespace symmflow::dist {

struct P2POp {
  enum class Kind { send, recv };
  Kind kind;
  Tensor tensor;
  int peer;  // group rank
  int tag = 0;
  // A send that never takes the eager path: it waits for the receive's post,
  // then the data moves once (put into a symmetric receive buffer, or read from
  // a symmetric send buffer). Only safe when the peer posts the matching receive
  // before it waits on anything that needs this rank's progress: a compiled
  // program sets it for a batch whose matching receive is in the peer's same
  // batch (eager would copy the message into a slot and out again).
  bool rendezvous = false;
  static P2POp send(Tensor t, int peer, int tag = 0) { return {Kind::send, std::move(t), peer, tag}; }
  static P2POp recv(Tensor t, int peer, int tag = 0) { return {Kind::recv, std::move(t), peer, tag}; }
};

Work isend(ProcessGroup& g, const Tensor& t, int dst, int tag = 0);
Work irecv(ProcessGroup& g, const Tensor& t, int src, int tag = 0);
// Posts every op (receives first, so that peers' sends find them), returns one
// Work per op, in order.
std::vector<Work> batch_isend_irecv(ProcessGroup& g, const std::vector<P2POp>& ops);

}  // namespace symmflow::dist
