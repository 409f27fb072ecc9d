// receive_twins: a graph input that P2P receives into only in part (halo2d's
// halo rows) gets a symmetric twin for the rows it receives, and the rest of it
// stays where the caller put it. Before this pass placement put the whole input
// in symmetric memory, a peer can write nothing else: passed regular, the grid
// was copied in (its owned rows are read) and back (its halo rows were
// received), 2 x 264 KiB a run for 2 KiB of halo. Now only the received rows
// live in the twin and only they go back: one copy of 2 KiB per input, and none
// when the caller passes the input symmetric (the twin is then the input).
//
//   before                                            after
//   %top = aten::slice(%u, 0, 0, 1)                   %t = symmflow::receive_twin(%u, [%top, %bot])
//   %bot = aten::slice(%u, 0, -1, None)               %top.t = aten::as_strided(%t, [1, 256], [256, 1], 0)
//   batch_isend_irecv(..., [%first, %top, %bot])      %bot.t = aten::as_strided(%t, [1, 256], [256, 1], 65792)
//   %n = aten::slice(%top, 1, 1, -1)                  batch_isend_irecv(..., [%first, %top.t, %bot.t])
//   %s = aten::add(%n, %c)                            %n.t = aten::as_strided(%t, [1, 254], [256, 1], 1)
//                                                     %s = aten::add(%n.t, %c)
//                                                     aten::copy_(aten::as_strided(%u, [2, 1, 256], ...),
//                                                                 aten::as_strided(%t, [2, 1, 256], ...))
//
// The twin has the input's layout, so a view of the input and the same
// as_strided view of the twin name the same elements. Every use from the first
// receive on of a view inside a received region reads the twin instead; uses
// before it keep reading the input's old bytes. An input qualifies when:
// - P2P receives write into views of it, each region one a peer writes in
//   place (a row, a column: ir::p2p_addressable) with no element overlapping
//   another, two regions the same view or disjoint;
// - from the first receive on, every view of it that shares a byte with a
//   region lies inside one region (every byte of it: a column's span holds
//   the columns beside it too), is used only after that region's first
//   receive, and is not written there except by a receive;
// - no collective or opaque op touches it, and it is not returned;
// - the regions are not the whole input (received whole, placement's own rule
//   already copies it back only, with no twin).
// Otherwise it is left as it was (placement copies it in and back, as before).
// The copies back are one aten::copy_ per set of regions of one layout at equal
// distances (halo2d's top and bottom rows: one copy), noted
// NodeOrigin::received_back, counted per input as the plan's other input copies
// and made only when the caller passes the input regular.
#pragma once
#include "symmflow/passes/pass.h"

namespace symmflow::passes {

class ReceiveTwins : public Pass {
 public:
  std::string_view name() const override { return "receive_twins"; }
  bool run(ir::Graph& g) override;
};

}  // namespace symmflow::passes
