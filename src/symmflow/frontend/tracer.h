// Tracing: the same user function runs eagerly or is recorded into a Graph.
// Every user-facing op (frontend/tensor_api.h, frontend/dist_api.h) goes through
// call(): with no Tracer active on this thread it dispatches to the op's CPU
// kernel; inside a Tracer it records a node and returns *tracer tensors* — meta
// tensors (types, no data) that stand for the node's results. The recorded graph
// is imperative, like a .sf program: in-place ops, views and P2P are recorded as
// written, and the compiler functionalizes them.
//
//   Tracer tr("step", rank, world);
//   Tensor x = tr.input(example_x);            // a tracer tensor for input 0
//   Tensor y = x * 2 + 1;                      // records aten::mul, aten::add
//   tr.set_outputs({y});
//   std::unique_ptr<ir::Graph> g = tr.finish();
#pragma once
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "symmflow/ir/graph.h"
#include "symmflow/library/bind.h"

namespace symmflow::frontend {

class Tracer {
 public:
  Tracer(std::string name, int rank, int world);
  ~Tracer();
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  // The tracer of this thread, or nullptr (eager).
  static Tracer* active();

  // A tracer tensor standing for the next graph input, of example's type.
  Tensor input(const Tensor& example);
  // Records `op` and returns its results as tracer tensors, shaped like the op's
  // returns (a Tensor, or a list for Tensor[]). A result that is a written input
  // (`Tensor(a!)`) is that input's own tensor, as in eager PyTorch.
  std::vector<IValue> record(std::string_view op, std::span<const IValue> positional, const Kwargs& kwargs);
  void set_outputs(const std::vector<Tensor>& outs);
  // Ends tracing (the thread is eager again) and hands over the graph.
  std::unique_ptr<ir::Graph> finish();

  bool is_traced(const Tensor& t) const;

 private:
  ir::Arg to_arg(const IValue& v, std::string_view op) const;
  ir::Value* value_of(const Tensor& t, std::string_view op) const;

  std::unique_ptr<ir::Graph> g_;
  // A written input's result is the user's own tensor (it keeps meaning the
  // imperative value %x); every other result is a new tracer tensor. tensor_of_
  // (by value id, dense: one slot per value, no map node per op) holds every
  // tracer tensor, so their impls stay alive and unique.
  std::unordered_map<const TensorImpl*, ir::Value*> values_;
  std::vector<Tensor> tensor_of_;
  void set_tensor_of(const ir::Value* v, Tensor t);
  Tracer* previous_ = nullptr;
  bool finished_ = false;
};

// Runs `op` eagerly (CPU kernel) or records it into the active Tracer.
std::vector<IValue> call(std::string_view op, std::span<const IValue> positional, const Kwargs& kwargs = {});
std::vector<IValue> call(std::string_view op, std::initializer_list<IValue> positional, const Kwargs& kwargs = {});
// The single tensor result of an op.
Tensor call_tensor(std::string_view op, std::initializer_list<IValue> positional, const Kwargs& kwargs = {});

}  // namespace symmflow::frontend
