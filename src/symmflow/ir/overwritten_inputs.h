// Which graph inputs' contents on entry are never read: every byte of the input
// is overwritten before any node reads it. A symmetric buffer that stands in for
// such an input (passed regular) need not be filled from the caller's tensor:
// only the copy back remains. halo2d's scratch grid %v is one: its edge columns
// are copied from %u, its owned rows computed and its halo rows received before
// anything reads it.
//
//   %v_left = aten::slice(%v, 1, 0, 1)
//   aten::copy_(%v_left, %u_left)              # writes column 0: no read of %v
//   aten::copy_(%v_rest, %t)                   # writes columns 1..: %v all written
//   %s = aten::sum(%v)                         # reads only bytes written above
//   -> %v overwritten before read (not copied in)
//
// A node overwrites without reading: aten::copy_ (its self), aten::fill_ and
// aten::zero_, a P2P op's receive buffers. Every other tensor a node takes is
// read (an in-place add_ reads what it writes), except by pure views; what a
// non-functional node writes then counts as written. Bytes are tracked exactly
// (core/overlap.h's runs); a view of more than kMaxWalkedRuns runs is taken as
// read and not as written, so the answer errs towards copying.
#pragma once
#include <vector>

#include "symmflow/ir/graph.h"

namespace symmflow::ir {

// Per graph input (by position): true when every byte of it is written before
// any read, false otherwise (also when some byte is never written). One pass over
// the graph. `roots`: ir::storage_roots(g).
std::vector<bool> overwritten_before_read(const Graph& g, const std::vector<Value*>& roots);

// Whether n writes argument slot s without reading the old contents there
// (aten::copy_'s self, aten::fill_ and aten::zero_, a receive's buffer).
bool overwrites_without_reading(const Node& n, const WriteSlot& s);

}  // namespace symmflow::ir
