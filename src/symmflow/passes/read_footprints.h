// Per-byte reads for reinplace (its rules 3 and 7 by bytes): which nodes read
// which bytes of a storage class, and where each value's elements lie in the
// buffer its class now shares once reinplace has moved fresh results into the
// buffers they replace. A write may then run in place when no later reader of
// the old value reads a byte it replaces, however much else of the buffer is
// still read (the other half of a double buffer, the interior rows of a grid
// whose halo row is received).
//
//   ReadFootprints f(g, roots);                 // roots: ir::storage_roots(g)
//   f.add(cls, pos, reader, v);                 // every tensor read, in program order
//   f.merge(into, from);                        // two classes became one
//   f.relocate(result, target);                 // the fresh `result` now lives where `target` is
//   if (f.decides(target) && !f.read_after(cls, pos, skip, target)) ...  // bytes dead: in place
//
// Rank: a decision by bytes may depend on a rank-dependent storage offset (a
// per-rank chunk), so ranks may decide differently. That is harmless for the
// buffers only compute and P2P use (each rank plans those on its own), not for
// the collective region of symmetric memory, which every rank must lay out alike
// (memory_plan's rule 7): decides() is false for any storage whose versions a
// collective or another ordered op touches, and reinplace decides those per
// storage, as before.
#pragma once
#include <cstddef>
#include <functional>
#include <unordered_map>
#include <vector>

#include "symmflow/ir/alias.h"
#include "symmflow/ir/graph.h"

namespace symmflow::passes {

class ReadFootprints {
 public:
  // `roots`: ir::storage_roots(g) of the graph as reinplace starts on it.
  ReadFootprints(const ir::Graph& g, const std::vector<ir::Value*>& roots);

  // `reader` (nullptr: the end of the program) reads v, a member of class cls, at
  // `pos`. (A pure view, slice, select or t, reads no element: read_after passes it.)
  void add(int cls, size_t pos, const ir::Node* reader, const ir::Value* v);
  // Class `from` joined class `into`.
  void merge(int into, int from);
  // The fresh buffer of `root` is given up: it and every view of it now lie where
  // `target` is. Call before root's type changes.
  void relocate(const ir::Value* root, const ir::Value* target);

  // May bytes decide for this target (see "Rank" above)?
  bool decides(const ir::Value* target) const;
  // Do a and b (members of one class) share a byte of its buffer? True when not
  // known (their buffers differ).
  bool share_bytes(const ir::Value* a, const ir::Value* b) const;
  // Does a node for which skip(node) is false read, after `pos`, a byte of
  // class cls that `target` covers? The end of the program (reader nullptr)
  // comes after everything and is never skipped.
  bool read_after(int cls, size_t pos, const std::function<bool(const ir::Node*)>& skip,
                  const ir::Value* target) const;

 private:
  // One read, linked to the next read of its class (-1: the last): merging two
  // classes links two lists.
  struct Read {
    size_t pos;
    const ir::Node* reader;
    const ir::Value* value;
    int next;
  };
  // A value's extent in the buffer of `root`, the storage it lies in now.
  struct Place {
    const ir::Value* root;
    ir::ViewExtent extent;
  };
  Place place(const ir::Value* v) const;
  const ir::Value* root(const ir::Value* v) const;
  int lineage(int id) const;

  std::vector<ir::Value*> roots_;
  std::vector<Read> reads_;
  struct List {
    int first = -1, last = -1;  // reads_ indices (-1: none)
  };
  std::vector<List> lists_;  // by class
  std::vector<const ir::Value*> moved_to_;  // by root id: where it moved (nullptr: it did not)
  // The type a moved root had, where it differs from its target's (reinplace
  // gives it the target's type): the frame its views' offsets are in.
  std::unordered_map<const ir::Value*, ir::TensorType> moved_from_;
  mutable std::vector<int> lineage_;   // union-find: every version of a storage, by value id
  std::vector<bool> ordered_lineage_;  // by lineage root: a collective or effect op uses it
};

}  // namespace symmflow::passes
