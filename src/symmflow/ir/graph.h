// Graph, Node, Value: symmflow's IR. A Graph is one SPMD program specialized for
// one (rank, world): inputs, nodes in program order, returned values. Every node
// is bound to one registered overload; its arguments are stored bound — one Arg
// per schema argument, in schema order, defaults filled — so a pass reads
// argument i as schema argument i. Types (dtype, sizes, strides, storage offset)
// come from the op's Meta kernel when the node is built, so an ill-typed program
// cannot be built at all.
//
//   Graph g("f", /*rank=*/0, /*world=*/2);
//   Value* x = g.add_input("x", TensorType{DType::f32, {4}});
//   Node* n = g.append_call("aten::add", {Arg(x), Arg(IValue(1.0))});   // add.Scalar
//   g.set_outputs({n->output(0)});
//
// Mutation is what the schema says (plus the op's mutation resolver), exactly as
// in eager: a node that writes `%y` changes what every later use of `%y` (and of
// every view of its storage) sees. `functional` nodes (see docs/ir.md) write
// nothing: they run on copies of their written arguments and return the new values.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "symmflow/core/ivalue.h"
#include "symmflow/ir/int_expr.h"
#include "symmflow/ir/pool.h"
#include "symmflow/ir/rank_set.h"
#include "symmflow/ir/small_vec.h"
#include "symmflow/library/operator.h"

namespace symmflow::ir {

class Node;
class Graph;
struct ExecPlan;

// Where a node or value came from in a .sf file (or a traced program).
struct SourceLoc {
  int line = 0;
  int col = 0;
};

// Sizes and strides as a value's type keeps them: inline up to 4 dims (the
// passes read them for every value; small_vec.h says why inline).
using Dims = SmallVec<int64_t, 4>;

struct TensorType {
  DType dtype = DType::f32;
  Dims sizes;
  Dims strides;  // empty: contiguous
  int64_t offset = 0;
  static TensorType of(const Tensor& t);
  // "f32[4, 8]"; with_layout adds " strides [1, 4] offset 2" when not contiguous at 0.
  std::string str(bool with_layout = false) const;
  bool is_contiguous_at_zero() const;
  // Its strides, or the contiguous ones where they are left empty.
  Shape full_strides() const;
  int64_t numel() const;
  // Bytes of its elements (numel x element size): what a copy of it moves.
  int64_t nbytes() const;
  // Bytes a storage needs to hold this view: its offset plus its extent.
  int64_t storage_bytes() const;
  // [begin, end) bytes of its storage the view spans (core/overlap.h's byte_extent).
  std::pair<int64_t, int64_t> byte_extent() const;
  Tensor meta() const;  // a meta tensor of this type
  bool operator==(const TensorType& o) const;
};

enum class ValueKind : uint8_t { Tensor, Int, Float, Bool };

// One use of a value: a node in program order that reads it, and which of the
// node's operands it is (its arguments' values flattened in order, as
// Arg::for_each_value visits them; `aten::add(%x, %x)` uses %x as operands 0 and 1).
struct Use {
  Node* user = nullptr;
  uint32_t operand = 0;
  bool operator==(const Use&) const = default;
};
using Uses = SmallVec<Use, 2>;  // most values have one or two readers

class Value {
 public:
  int id() const { return id_; }
  const std::string& name() const { return name_; }
  ValueKind kind() const { return kind_; }
  bool is_tensor() const { return kind_ == ValueKind::Tensor; }
  const TensorType& type() const { return type_; }
  // A pass that sets a type by hand: the next Graph::refresh_layouts derives
  // this value's layout (and its readers') with the Meta kernels again.
  void set_type(TensorType t);
  std::string type_str() const;  // "f32[4]", "i64", "f64", "bool"
  // The node that defines it (nullptr for a graph input) and which of its results.
  Node* producer() const { return producer_; }
  int output_index() const { return output_index_; }
  // Placement (passes/symm_placement): this value's storage must be symmetric.
  bool symmetric() const { return symmetric_; }
  void set_symmetric(bool s) { symmetric_ = s; }
  // Bytes of the storage this value views (its own, or the viewed value's).
  int64_t storage_size() const { return storage_size_; }
  // Its def-use list: every operand of a node in program order that reads it, in
  // no particular order. The Graph keeps it through every mutation (argument
  // edits, insertion, removal, reordering, replace_uses), so finding or
  // replacing a value's uses costs O(uses), not O(graph). Nodes made but not in
  // program order (Graph::make_node before append) are not uses.
  const Uses& uses() const { return uses_; }
  // How many of the graph's returned values are this one.
  int returned() const { return returned_; }

 private:
  friend class Graph;
  // What the passes read of every value come first, in two cache lines (a pass
  // walking 100k nodes misses to memory on each line it touches); the name,
  // which only printing and renaming read, last.
  int id_ = 0;
  ValueKind kind_ = ValueKind::Tensor;
  bool generated_name_ = false;
  bool symmetric_ = false;
  Node* producer_ = nullptr;
  Uses uses_;
  int returned_ = 0;
  int output_index_ = -1;
  int64_t storage_size_ = 0;
  TensorType type_;
  // Graph::refresh_layouts' stamp of the last change of type_ or storage_size_
  // (kLayoutChangedByHand after set_type): its readers derived before it are stale.
  uint64_t layout_changed_ = 0;
  std::string name_;
};

// Where a buffer lives (passes/memory_plan): an arena and an offset in it.
enum class Arena : uint8_t { regular, symmetric };
struct BufferSlot {
  Arena arena = Arena::regular;
  int64_t offset = 0;  // bytes
  int64_t bytes = 0;
};

// What symm_placement decided for one value an op needs symmetric (--explain).
struct PlacementDecision {
  enum class Kind : uint8_t { planned, view_base, scope, input_copy, staged };
  Kind kind = Kind::planned;
  std::string value;      // the value the op reads ("%h")
  std::string op;         // the op that needs it, and which argument
  std::string reason;
  int64_t bytes_copied = 0;  // per run, when the input is not already symmetric
};

// A symmetric buffer a collective (or another op every rank issues in order)
// reads or writes: it must sit at the same offset on every rank. It is named by
// the first such op that takes it — its place in the collective sequence — and the
// operand (arguments, then results), which ranks running different code share.
struct CollectiveBuffer {
  int value_id = 0;     // this rank's value (its name differs between ranks' programs)
  int collective = 0;   // 0-based, among the ops every rank issues in order
  int operand = 0;
  int64_t offset = 0;   // bytes, in the collective region
  int64_t bytes = 0;
};

// The compiled program's memory: the passes fill it, the executor allocates it.
// The symmetric arena has two regions: [0, collective_bytes) holds the buffers of
// collectives, laid out alike on every rank; after it, each rank's P2P-only
// buffers (a receiver posts its own offset, so these may differ between ranks).
struct MemoryPlan {
  bool planned = false;
  bool sentinels = false;                    // 64 guard bytes after every planned buffer
  int64_t arena_bytes[2] = {0, 0};           // regular, symmetric (both regions)
  int64_t collective_bytes = 0;              // the symmetric arena's collective region
  std::unordered_map<int, BufferSlot> slots;  // by Value id: buffers the plan holds
  std::vector<CollectiveBuffer> collective_buffers;  // by (collective, operand)
  uint64_t symmetric_hash = 0;                // of the collective region: compared across ranks at load
  std::vector<PlacementDecision> decisions;
};

// Planned buffers start at multiples of kBufferAlign bytes; with sentinels on,
// kSentinelBytes guard bytes follow each (passes/memory_plan.h's rule 4).
inline constexpr int64_t kBufferAlign = 64;
inline constexpr int64_t kSentinelBytes = 64;

// One argument: a value, a constant, an int expression over rank/world (its value
// for this graph's rank is kept beside it), or a list of those.
struct Arg {
  enum class Kind : uint8_t { Const, Value, Expr, List };
  Kind kind = Kind::Const;
  IValue constant;  // Const; and Expr's value
  Value* value = nullptr;
  IntExpr::Ptr expr;
  std::vector<Arg> elems;

  Arg() = default;
  explicit Arg(IValue c) : constant(std::move(c)) {}
  explicit Arg(Value* v) : kind(Kind::Value), value(v) {}
  static Arg of_expr(IntExpr::Ptr e, int64_t value);
  static Arg list(std::vector<Arg> elems);

  bool has_values() const;
  // Calls f(Value*) for every value in the argument, in order.
  template <class F>
  void for_each_value(F&& f) const {
    if (kind == Kind::Value) f(value);
    for (const auto& e : elems) e.for_each_value(f);
  }
  template <class F>
  void for_each_value_mut(F&& f) {
    if (kind == Kind::Value) f(value);
    for (auto& e : elems) e.for_each_value_mut(f);
  }
};

// A tensor an op writes: argument index and list element (-1: the argument itself).
struct WriteSlot {
  size_t arg = 0;
  int64_t elem = -1;
  bool operator==(const WriteSlot&) const = default;
};
// What a node keeps per result and per written tensor: one or two almost
// always, inline in the node (small_vec.h).
using WriteSlots = SmallVec<WriteSlot, 1>;
using OutputSlots = SmallVec<std::optional<WriteSlot>, 2>;
using ValueList = SmallVec<Value*, 2>;

// Who made a node: the program, or a pass (reinplace's copy of a value still
// read after an in-place write; functionalize's epilogue that writes a mutated
// input's final contents back; receive_twins' copy of the rows P2P received
// into a graph input's symmetric twin back into the input).
enum class NodeOrigin : uint8_t { program, reinplace_copy, epilogue, received_back };

// How a communication op runs (collective_lowering): none for compute and
// before lowering; direct (the op's own symmetric-memory path), one_shot and
// two_shot (all_reduce), staged (a buffer is not symmetric: through the
// runtime's staging copies).
enum class Algorithm : uint8_t { none, direct, one_shot, two_shot, staged };
std::string_view algorithm_name(Algorithm a);  // "one_shot"; "" for none

class Node {
 public:
  Operator& op() const { return *op_; }
  const FunctionSchema& schema() const { return op_->schema(); }
  const std::string& op_name() const { return op_->full_name(); }
  // Read-only: arguments change through the Graph (set_arg, set_value_at,
  // map_operands), which keeps the def-use lists.
  const std::vector<Arg>& args() const { return args_; }
  const Arg& arg(size_t i) const { return args_.at(i); }
  // Whether argument i was written in the source (the printer omits the others,
  // which hold their defaults).
  bool arg_given(size_t i) const { return given_.at(i); }
  // A pass that fills in an argument the source left to its default makes it
  // explicit, so that the printed text means the same.
  void mark_given(size_t i) { given_.at(i) = true; }
  const ValueList& outputs() const { return outputs_; }
  Value* output(size_t i) const { return outputs_.at(i); }
  bool functional() const { return functional_; }
  const SourceLoc& loc() const { return loc_; }
  void set_loc(SourceLoc l) { loc_ = l; }

  // The tensors this node writes when run as written (not functional): from the
  // schema's alias annotations, or the op's mutation resolver; lists expanded to
  // their elements.
  const WriteSlots& writes() const;
  // The Value at a write slot.
  Value* value_at(const WriteSlot& s) const;
  // For each output: the write slot it is the new value of (functional nodes and
  // `Tensor(a!)` returns), or nullopt for a fresh result or a plain alias.
  const OutputSlots& output_slots() const;
  // For each output: the argument value it aliases without writing it (a view's
  // input, a sent tensor), or nullptr.
  std::vector<Value*> output_aliases() const;
  // Output i's entry of output_aliases(), without building the vector (passes
  // ask for every node).
  Value* output_alias(size_t i) const;
  // Whether any output is such an alias (the node makes a view).
  bool has_output_alias() const;
  // The input value output i shares storage with (ir/alias.h), or nullptr.
  Value* output_storage_source(size_t i) const;
  // True for ops with effects beyond their results: collectives, P2P, waits, ops
  // of unknown namespaces (plugins; not aten::, nor symmflow::, the compiler's
  // own compute ops). dce and cse never touch them.
  bool has_effects() const;
  // Which pass made this node, if any (typed: the executable plan counts the
  // copies from it); none for the program's own nodes.
  NodeOrigin origin() const { return origin_; }
  // Why a pass created this node ("copy: %y is read after the write"): human
  // text for the printer and --explain only; nothing decides on it.
  const std::string& note() const { return note_; }
  void set_origin(NodeOrigin o, std::string note) {
    origin_ = o;
    note_ = std::move(note);
  }
  // The algorithm collective_lowering chose (Algorithm::none before it, and for
  // compute); the executable plan hands it to the runtime.
  Algorithm algorithm() const { return algorithm_; }
  void set_algorithm(Algorithm a) { algorithm_ = a; }

 private:
  friend class Graph;
  friend class Value;  // set_type marks its producer's layouts stale
  void invalidate() { classified_ = false; }
  void classify() const;

  // What every pass reads of every node comes first, in the first cache lines
  // (a pass walking 100k nodes misses to memory on each line it touches): the
  // op, arguments, results, position and what it writes. The source location,
  // the printer's given_ and the note last.
  Operator* op_ = nullptr;
  std::vector<Arg> args_;
  ValueList outputs_;
  mutable size_t pos_ = 0;  // its index in program order (Graph::position)
  // Def-use bookkeeping (Graph): whether the node is in program order (its
  // operands are uses), and for each operand its index in the value's uses().
  bool in_order_ = false;
  bool functional_ = false;
  // What the node writes and what its outputs are, from the schema: computed on
  // first use and kept (passes ask often), recomputed when the op or the outputs
  // change. Substituting values in the arguments changes neither.
  mutable bool classified_ = false;
  // Graph::refresh_layouts' bookkeeping: when the results' layouts were last
  // derived from the arguments (a stamp, layout_at_), and whether the arguments,
  // op or form changed since in a way that may change them (then the node is
  // derived again).
  bool layout_stale_ = true;
  NodeOrigin origin_ = NodeOrigin::program;
  Algorithm algorithm_ = Algorithm::none;
  mutable WriteSlots writes_;
  mutable OutputSlots slots_, aliases_;
  size_t num_returns_ = 0;  // outputs that are the op's own returns (flattened)
  SmallVec<uint32_t, 4> use_pos_;
  uint64_t mark_ = 0;
  uint64_t layout_at_ = 0;
  SmallVec<bool, 8> given_;
  SourceLoc loc_;
  std::string note_;
};

// Arguments as written at a call site, before binding.
struct CallArgs {
  std::vector<Arg> positional;
  std::vector<std::pair<std::string, Arg>> keywords;
};

class Graph {
 public:
  Graph(std::string name, int rank, int world);
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  const std::string& name() const { return name_; }
  int rank() const { return rank_; }
  int world() const { return world_; }
  // The file the graph was parsed from (for `file:line:col` in messages).
  const std::string& file() const { return file_; }
  void set_file(std::string f) { file_ = std::move(f); }
  // The ranks this graph is for when the program's ranks run different code
  // (ir/rank_set.h); nullptr for an SPMD graph (every rank runs it).
  const RankSet* rank_set() const { return rank_set_ ? &*rank_set_ : nullptr; }
  void set_rank_set(RankSet s) { rank_set_ = std::move(s); }

  Value* add_input(std::string name, TensorType type);
  Value* add_scalar_input(std::string name, ValueKind kind);
  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  void set_outputs(std::vector<Value*> outs);
  // The declared result types (the signature); checked against outputs by verify().
  const std::vector<TensorType>& output_types() const { return output_types_; }
  void set_output_types(std::vector<TensorType> t) { output_types_ = std::move(t); }

  // Nodes in program order. Passes rebuild the order with set_order or insert.
  const std::vector<Node*>& nodes() const { return order_; }
  size_t size() const { return order_.size(); }
  // n's index in nodes(), O(1): renumbered once after the order changed (not a
  // hash map per pass). n must be in program order.
  size_t position(const Node* n) const;
  // n's index in nodes(), or size() when n is not there; from the order alone,
  // not the def-use bookkeeping (the verifier checks that). A node listed twice
  // has its last index.
  size_t find_position(const Node* n) const;

  // Resolves the overload (PyTorch's rules: exact kinds win), binds the arguments,
  // infers result types with the Meta kernel and appends the node. `out_names`
  // names its results (fresh names when empty). Errors name the op.
  Node* append_call(std::string_view op, CallArgs args, SourceLoc loc = {},
                    bool functional = false, std::vector<std::string> out_names = {});
  // Builds a node from already bound arguments (passes), without appending it.
  Node* make_node(Operator& op, std::vector<Arg> bound, bool functional, SourceLoc loc = {});
  // The same for a node run as written whose result types the pass already
  // knows, because the node stands for others it replaces (fuse_pointwise: a
  // chain's fused node returns what the chain's last node returned). Skips the
  // Meta kernel; verify() still derives the types with it and compares.
  Node* make_node_typed(Operator& op, std::vector<Arg> bound, SourceLoc loc, std::vector<TensorType> results);
  // Runs a functional node as its op in place. Its results that were the new
  // values of written tensors no return carries are dropped and returned, so the
  // caller can replace their uses by the written tensors themselves.
  std::vector<Value*> make_in_place(Node* n);
  // Swaps the op of n for one with the same arguments (aten::add -> aten::add_).
  void set_op(Node* n, Operator& op);
  void append(Node* n);
  // Inserts n before `before` in program order (at the end when before is null).
  void insert_before(Node* before, Node* n);
  // The new order may drop nodes and add made ones: O(old + new) either way.
  void set_order(std::vector<Node*> order);
  // Re-derives every result's layout (strides, offset) from its arguments'
  // current types with the Meta kernels, in program order: a pass that changes
  // what a value is (reinplace receiving into a clone instead of a view) would
  // otherwise leave the layouts of values derived from it stale. Only the nodes
  // whose layouts may have changed run their Meta kernel: those whose op, form
  // or arguments changed to a value of another layout since their results were
  // derived, and the readers of a value whose layout changed (the result is the
  // same as running every node's kernel; that cost O(graph) per pass).
  void refresh_layouts();
  // Removes n from program order (it stays owned by the graph, in its pool, until
  // the graph goes: a pass may still hold it).
  void remove(Node* n);

  // Replaces every use of `from` by `to`, in the uses whose node `where` accepts
  // (all of them when `where` is empty), and in the returned values: O(uses).
  // Returns how many it replaced.
  size_t replace_uses(Value* from, Value* to, const std::function<bool(const Node*)>& where = {});

  // Argument edits. Each keeps the def-use lists of the values it unhooks and
  // hooks; on a node not in program order it only edits.
  void set_arg(Node* n, size_t i, Arg a);                 // argument i
  void set_value_at(Node* n, const WriteSlot& s, Value* v);  // a value argument or list element
  // Replaces every operand v of n by f(v).
  template <class F>
  void map_operands(Node* n, F&& f) {
    uint32_t k = 0;
    for (auto& a : n->args_)
      a.for_each_value_mut([&](Value*& v) {
        Value* to = f(v);
        if (to != v) {
          note_operand_change(n, v, to);
          if (n->in_order_) drop_use(v, n, k);
          v = to;
          if (n->in_order_) add_use(v, n, k);
        }
        ++k;
      });
  }
  // An unused name: `_N` for the hint "_", else `hint.N` (`%y.1`, `%y.2`: the
  // versions of %y that passes create).
  std::string fresh_name(std::string_view hint);
  // Gives v (a result nobody named) the next version name of `like`: %y -> %y.1.
  void name_after(Value* v, const Value* like);
  Value* find_value(std::string_view name) const;
  size_t num_values() const { return values_.size(); }
  Value* value(size_t id) const { return values_.at(id); }

  // Evaluates an argument to the IValue a kernel gets, reading values from env
  // (indexed by Value::id).
  IValue materialize(const Arg& a, std::span<const IValue> env) const;
  std::vector<IValue> materialize_args(const Node& n, std::span<const IValue> env) const;

  MemoryPlan& plan() { return plan_; }
  const MemoryPlan& plan() const { return plan_; }
  // The executable plan (ir/exec_plan.h), beside the memory plan: nullptr until
  // the pipeline's last step builds it.
  const ExecPlan* exec_plan() const { return exec_plan_.get(); }
  void set_exec_plan(std::unique_ptr<ExecPlan> p);

  // A graph equal to this one (same names, nodes, types; not the memory plan,
  // whose value ids do not carry over); for passes that need to keep the original.
  std::unique_ptr<Graph> clone() const;

 private:
  Value* new_value(std::string name, TensorType type, ValueKind kind = ValueKind::Tensor);
  void hold_generated(Value* v, std::string_view name);  // v is `_N`: generated_[N] = v
  // A node entering program order hooks its operands into their values' uses;
  // one leaving unhooks them. add/drop one operand k of n reading v: O(1).
  void hook(Node* n);
  void unhook(Node* n);
  static void add_use(Value* v, Node* n, uint32_t k);
  static void drop_use(Value* v, Node* n, uint32_t k);
  // n's operand `from` becomes `to`: n's layouts are stale unless `to` has the
  // layout `from` had when they were derived (refresh_layouts).
  static void note_operand_change(Node* n, const Value* from, const Value* to);
  // `meta`: meta_args(n's arguments) when the caller has them already.
  void infer_outputs(Node* n, std::vector<std::string> out_names, std::optional<std::vector<IValue>> meta = {});
  // n's result values, of these types, with their storage sizes.
  void set_results(Node* n, const std::vector<std::string>& out_names, std::vector<TensorType> types);
  void share_storage_sizes(Node* n);

  std::string name_;
  std::string file_;
  int rank_, world_;
  // Every value and node the graph made, in creation order (ir/pool.h);
  // values_ indexes the values by id.
  Pool<Value> value_pool_;
  Pool<Node> node_pool_;
  std::vector<Value*> values_;
  std::vector<Node*> order_;
  std::vector<Value*> inputs_, outputs_;
  std::vector<TensorType> output_types_;
  // Names the program or a pass gave; the generated `_N` by N (nullptr once
  // renamed), and how many given names have that form (fresh names skip them).
  std::unordered_map<std::string, Value*> by_name_;
  std::vector<Value*> generated_;
  size_t explicit_generated_form_ = 0;
  size_t next_fresh_ = 0;
  std::unordered_map<std::string, int> next_version_;
  uint64_t order_epoch_ = 0;  // set_order's marks
  uint64_t layout_epoch_ = 0;  // refresh_layouts' stamps (Node::layout_at_, Value::layout_changed_)
  mutable bool positions_valid_ = true;  // every node's pos_ is its index in order_
  MemoryPlan plan_;
  std::unique_ptr<ExecPlan> exec_plan_;
  std::optional<RankSet> rank_set_;
};

// Flattens an op's results (Tensor or Tensor[] per return) into tensors.
std::vector<Tensor> flatten_results(const std::vector<IValue>& results);

}  // namespace symmflow::ir
