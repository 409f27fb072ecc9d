// symmflow._C: the thin pybind11 layer under the `symmflow` package. Python
// never sees symmflow's internals, only:
// - Tensor: an opaque symmflow tensor, to and from DLPack (no copies);
// - the runtime: init, rank, world size, symmetric allocation;
// - call_op: any registered op run eagerly through the same dispatcher as C++;
// - P2P started eagerly and waited later (p2p_start / p2p_wait);
// - Program: a .sf program compiled by the whole pipeline, replayed on tensors;
// - run_eager_sf: symmflow's eager interpreter on a .sf program (the reference).
// Everything else (tracing with make_fx, the FX → .sf translation, the signature
// cache) is Python, in symmflow/torch.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <fmt/format.h>

#include <memory>
#include <mutex>

#include "dlpack_bridge.h"
#include "symmflow/core/error.h"
#include "symmflow/exec/comm_match.h"
#include "symmflow/exec/compiled_program.h"
#include "symmflow/exec/copy_report.h"
#include "symmflow/exec/explain.h"
#include "symmflow/exec/interpreter.h"
#include "symmflow/exec/timeline.h"
#include "symmflow/frontend/tracer.h"
#include "symmflow/ir/parser.h"
#include "symmflow/ir/printer.h"
#include "symmflow/library/dispatcher.h"
#include "symmflow/library/operator.h"
#include "symmflow/library/symm_mem_args.h"
#include "symmflow/kernels/copy.h"
#include "symmflow/runtime/copy_stats.h"
#include "symmflow/passes/pipeline.h"
#include "symmflow/runtime/symm.h"
#include "symmflow/runtime/world.h"

namespace py = pybind11;
using namespace symmflow;

namespace {

void require_init(const char* what) {
  SF_CHECK(dist::is_initialized(), "{}: symmflow is not initialized; call symmflow.torch.init() first", what);
}

// The Tensor class's pybind11 record, looked up once. py::isinstance, cast and
// py::cast look it up by std::type_index (a hash of the type's name) on each
// call: 3 lookups per op argument and result, a tenth of a Python op call's
// floor (`neg` of one element: 0.96 us against PyTorch's 0.89;
// docs/performance.md, "Round 10: the Python call's floor"). The class is registered before
// any function of this module can run, so the first call finds it.
const py::detail::type_info& tensor_class() {
  static const py::detail::type_info* info = py::detail::get_type_info(typeid(Tensor), /*throw_if_missing=*/true);
  return *info;
}

IValue to_ivalue(const py::handle& o) {
  if (o.is_none()) return IValue();
  if (Py_TYPE(o.ptr()) == tensor_class().type) {  // final (py::is_final): no subclass to miss
    py::detail::type_caster_generic caster(&tensor_class());
    SF_CHECK(caster.load(o, false), "call_op: a symmflow Tensor that holds no tensor");
    return IValue(*static_cast<const Tensor*>(caster.value));
  }
  if (py::isinstance<py::bool_>(o)) return IValue(o.cast<bool>());
  if (py::isinstance<py::int_>(o)) return IValue(o.cast<int64_t>());
  if (py::isinstance<py::float_>(o)) return IValue(o.cast<double>());
  if (py::isinstance<py::str>(o)) return IValue(o.cast<std::string>());
  if (py::isinstance<py::list>(o) || py::isinstance<py::tuple>(o)) {
    IValueList l;
    for (auto item : o) l.push_back(to_ivalue(item));
    return IValue(std::move(l));
  }
  throw Error(fmt::format("call_op: cannot pass a Python {} to an op", std::string(py::str(o.get_type()))));
}

// An op call's Python arguments as the dispatcher takes them.
std::pair<std::vector<IValue>, Kwargs> to_call_args(const py::list& args, const py::dict& kwargs) {
  std::vector<IValue> pos;
  pos.reserve(args.size());
  for (auto a : args) pos.push_back(to_ivalue(a));
  Kwargs kw;
  for (auto [k, v] : kwargs) kw.emplace(k.cast<std::string>(), to_ivalue(v));
  return {std::move(pos), std::move(kw)};
}

py::object from_ivalue(const IValue& v) {
  switch (v.kind()) {
    case IValue::Kind::None: return py::none();
    case IValue::Kind::Tensor: {
      const Tensor& t = v.to_tensor();
      auto copy = [](const void* p) -> void* { return new Tensor(*static_cast<const Tensor*>(p)); };
      return py::reinterpret_steal<py::object>(py::detail::type_caster_generic::cast(
          &t, py::return_value_policy::copy, py::handle(), &tensor_class(), copy, nullptr));
    }
    case IValue::Kind::Int: return py::int_(v.to_int());
    case IValue::Kind::Double: return py::float_(v.to_double());
    case IValue::Kind::Bool: return py::bool_(v.to_bool());
    case IValue::Kind::String: return py::str(v.to_string());
    case IValue::Kind::DType: return py::str(std::string(dtype_name(v.to_dtype())));
    case IValue::Kind::List: {
      py::list l;
      for (const auto& e : v.to_list()) l.append(from_ivalue(e));
      return l;
    }
  }
  return py::none();
}

DType dtype_arg(const std::string& name) {
  DType d;
  SF_CHECK(parse_dtype(name, &d), "unknown dtype '{}' (f32, f64, bf16, f16, i32, i64, bool)", name);
  return d;
}

// P2P started eagerly from Python and not yet waited for, by the address and
// size of the tensor it moves (a later import of the same torch tensor finds it).
struct PendingP2P {
  Tensor handle;
  const void* data;
  size_t nbytes;
};
std::mutex pending_mu;
std::vector<PendingP2P> pending;

// An eager call. An argument the op registers as symmetric (symm_mem::*'s
// `input`) that the caller passed in regular memory is staged: copied into a
// symmetric buffer of the op's group, and back if the op writes it; each copy is
// counted in dist::staged_copy_stats(), as the runtime's own staged paths are.
// (torch.ops.symm_mem.* in PyTorch refuse such a tensor; eager code should not
// have to know where the compiler would have placed it.)
std::vector<IValue> call_staged(const std::string& op, const std::vector<IValue>& pos, const Kwargs& kw) {
  auto [o, bound] = Dispatcher::instance().resolve(op, pos, kw);
  const FunctionSchema& s = o->schema();
  std::vector<std::pair<size_t, Tensor>> staged;  // (argument, the caller's tensor)
  for (const std::string& name : symm_mem_args(*o)) {
    auto i = s.argument_index(name);
    if (!i || !bound[*i].is_tensor()) continue;
    const Tensor& t = bound[*i].to_tensor();
    if (t.is_symmetric()) continue;
    auto g = s.argument_index("group_name");
    auto& group = g && bound[*g].is_string() ? dist::group(bound[*g].to_string()) : dist::world();
    Tensor sym = symm::empty(t.sizes(), t.dtype(), group);
    kernels::copy_(sym, t);
    dist::count_staged_copy(t.nbytes());
    staged.emplace_back(*i, t);
    bound[*i] = IValue(sym);
  }
  OpContext ctx(DispatchKey::CPU);  // resolved once above: dispatch the bound call
  auto out = o->call(ctx, bound);
  const auto written = s.mutated_arguments();
  for (const auto& [i, t] : staged)
    if (std::find(written.begin(), written.end(), i) != written.end()) {
      kernels::copy_(t, bound[i].to_tensor());
      dist::count_staged_copy(t.nbytes());
    }
  return out;
}

// A compiled .sf program for this rank: the whole pipeline, then replays.
class Program {
 public:
  Program(const std::string& text, const std::string& file, bool overlap, int max_in_flight, bool verify) {
    require_init("compile");
    auto& w = dist::world();
    auto g = ir::parse_graph(text, {.file = file, .rank = w.rank(), .world = w.size()});
    // Every rank's sends have their receives and the collectives agree, before
    // anything is compiled or runs (collective: all ranks compile together).
    exec::match_communication(*g);
    passes::PipelineOptions po;
    po.schedule.overlap = overlap;
    if (max_in_flight > 0) po.schedule.max_in_flight = max_in_flight;
    po.check_hazards = po.check_hazards || verify;
    passes::optimize(*g, po);
    explain_ = exec::explain(*g);
    prog_ = std::make_unique<exec::CompiledProgram>(std::move(g));
  }
  std::vector<Tensor> run(const std::vector<Tensor>& inputs) {
    std::vector<IValue> in(inputs.begin(), inputs.end());
    return prog_->run(in);
  }
  const std::string& explain() const { return explain_; }
  std::string ir() const { return ir::print_graph(prog_->graph(), {.types = true}); }
  py::dict stats() const {
    auto s = prog_->stats();
    py::dict d;
    d["runs"] = s.runs;
    // The one copy report (exec/copy_report.h) that --explain and --json read.
    d["copies"] = s.copies.count();
    d["copy_bytes"] = s.copies.bytes();
    for (exec::CopyOrigin o : exec::kCopyOrigins) {
      d[py::str(fmt::format("copies_{}", exec::origin_name(o)))] = s.copies.count(o);
      d[py::str(fmt::format("copy_bytes_{}", exec::origin_name(o)))] = s.copies.bytes(o);
    }
    d["buffers"] = s.buffers;
    d["regular_bytes"] = s.regular_bytes;
    d["symmetric_bytes"] = s.symmetric_bytes;
    d["temporary_bytes"] = s.temporary_bytes;  // kernel temporaries, kept between runs
    d["allocations"] = s.allocations;          // what the last run allocated (its returned results)
    d["input_offset_checks"] = s.input_offset_checks;  // ranks compared symmetric inputs: once per signature
    return d;
  }
  void set_tracing(bool on) {
    prog_->set_timeline(on ? &timeline_ : nullptr);
  }
  std::string trace_json() const { return exec::events_to_json(timeline_.events); }

 private:
  std::unique_ptr<exec::CompiledProgram> prog_;
  std::string explain_;
  exec::Timeline timeline_;
};

// Every rank's bytes, in rank order: the runtime's bootstrap exchange, which
// (unlike a world collective) leaves the groups' first-collective setup where the
// program's own first collective is.
std::vector<py::bytes> all_gather_bytes(const std::string& mine) {
  require_init("all_gather_bytes");
  std::vector<py::bytes> all;
  for (const auto& text : dist::all_gather_text(mine, "symmflow.torch")) all.emplace_back(text);
  return all;
}

}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "symmflow's C++ core (see symmflow.torch for the PyTorch API)";
  py::register_exception<Error>(m, "Error", PyExc_RuntimeError);

  py::class_<Tensor>(m, "Tensor", py::is_final())  // final: to_ivalue knows it by its exact type
      .def_static("from_dlpack", &python::tensor_from_dlpack, py::arg("capsule"), py::arg("as_bool") = false)
      .def("to_dlpack",
           [](const Tensor& t) { return py::make_tuple(python::tensor_to_dlpack(t), t.dtype() == DType::boolean); })
      .def_property_readonly("symmetric", &Tensor::is_symmetric)
      .def_property_readonly("data_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.data_ptr()); })
      .def_property_readonly("shape", [](const Tensor& t) { return t.sizes(); })
      .def_property_readonly("strides", [](const Tensor& t) { return t.strides(); })
      .def_property_readonly("dtype", [](const Tensor& t) { return std::string(dtype_name(t.dtype())); })
      .def("__repr__", [](const Tensor& t) {
        return fmt::format("symmflow._C.Tensor({}{}, {})", dtype_name(t.dtype()), fmt::join(t.sizes(), ","),
                           t.is_symmetric() ? "symmetric" : "regular");
      });

  m.def("init", [] {
    py::gil_scoped_release nogil;
    dist::init();
  }, "Attach to the job `symmflow launch` or mpirun started (idempotent).");
  m.def("is_initialized", &dist::is_initialized);
  m.def("rank", [] { require_init("rank"); return dist::world().rank(); });
  m.def("world_size", [] { require_init("world_size"); return dist::world().size(); });
  m.def("set_timeout", &dist::set_timeout);
  m.def("timeout", &dist::timeout);
  m.def("has_group", [](const std::string& name) {
    try {
      dist::group(name);
      return true;
    } catch (const Error&) {
      return false;
    }
  });
  m.def("group_size", [](const std::string& name) { require_init("group_size"); return dist::group(name).size(); });
  m.def("symmetric_empty", [](std::vector<int64_t> shape, const std::string& dtype, const std::string& group) {
    require_init("empty");
    DType d = dtype_arg(dtype);
    py::gil_scoped_release nogil;
    return symm::empty(std::move(shape), d, dist::group(group));
  });
  m.def("is_symmetric_address", [](uintptr_t p) { return python::symmetric_storage_at(reinterpret_cast<void*>(p)) != nullptr; });
  m.def("has_op", [](const std::string& name) {
    return Dispatcher::instance().find(name) != nullptr || !Dispatcher::instance().overloads(name).empty();
  }, "Whether an op (\"aten::add.Tensor\") or an overload of a name (\"aten::add\") is registered.");

  m.def("op_schemas", [](const std::string& ns) {
    std::vector<std::string> out;
    for (const Operator* op : Dispatcher::instance().all_operators())
      if (op->schema().ns == ns) out.push_back(op->schema().to_string());
    return out;
  }, "The schemas of every op in a namespace (\"c10d\"), as PyTorch's schema language writes them.");
  m.def("op_return_aliases", [](const std::string& op) {
    const FunctionSchema& s = Dispatcher::instance().get(op).schema();
    std::vector<std::optional<size_t>> out;
    for (size_t i = 0; i < s.returns.size(); ++i) out.push_back(s.aliased_input_of_return(i));
    return out;
  }, "Per return of an op, the index of the argument it aliases (Tensor(a!) -> Tensor(a!)), or None.");
  m.def("meta_tensor", [](std::vector<int64_t> shape, std::vector<int64_t> strides, const std::string& dtype) {
    return Tensor::meta(std::move(shape), dtype_arg(dtype), std::move(strides));
  }, "A tensor with a type and no data (for Meta kernels).");
  m.def("call_meta", [](const std::string& op, const py::list& args, const py::dict& kwargs) {
    auto [pos, kw] = to_call_args(args, kwargs);
    auto [o, bound] = Dispatcher::instance().resolve(op, pos, kw);
    OpContext ctx(DispatchKey::Meta);
    py::list res;
    for (const auto& v : o->call(ctx, bound)) res.append(from_ivalue(v));
    return res;
  }, "Run an op's Meta kernel: result types without data.");
  m.def("call_op", [](const std::string& op, const py::list& args, const py::dict& kwargs) {
    auto [pos, kw] = to_call_args(args, kwargs);
    std::vector<IValue> out;
    {
      py::gil_scoped_release nogil;
      out = call_staged(op, pos, kw);
    }
    py::list res;
    for (const auto& v : out) res.append(from_ivalue(v));
    return res;
  }, "Run a registered op eagerly (the CPU kernel), as C++ eager code does.");

  m.def("p2p_start", [](const py::list& op_types, const py::list& peers, const py::list& tags, const py::list& tensors,
                        const std::string& group) {
    std::vector<IValue> pos{to_ivalue(op_types), to_ivalue(peers), to_ivalue(tags), to_ivalue(tensors), IValue(group)};
    std::vector<IValue> out;
    {
      py::gil_scoped_release nogil;
      out = frontend::call("c10d::batch_isend_irecv", pos);
    }
    std::lock_guard lk(pending_mu);
    for (const auto& h : out.at(0).to_tensor_list()) pending.push_back({h, h.data_ptr(), h.nbytes()});
  }, "Start c10d::batch_isend_irecv eagerly; p2p_wait(t) completes the entry that moves t.");
  m.def("p2p_wait", [](const Tensor& t) {
    std::vector<Tensor> mine;
    {
      std::lock_guard lk(pending_mu);
      for (auto it = pending.begin(); it != pending.end();) {
        if (it->data == t.data_ptr() && it->nbytes == t.nbytes()) {
          mine.push_back(it->handle);
          it = pending.erase(it);
        } else {
          ++it;
        }
      }
    }
    py::gil_scoped_release nogil;
    for (const auto& h : mine) frontend::call("c10d::wait_tensor", {IValue(h)});
    return int(mine.size());
  }, "Wait for the eager P2P entries that move t; returns how many.");
  m.def("p2p_pending", [] {
    std::lock_guard lk(pending_mu);
    return pending.size();
  });
  m.def("staged_copy_stats", [] {
    auto s = dist::staged_copy_stats();
    return py::make_tuple(s.count, s.bytes);
  }, "(copies, bytes) the staged paths copied in this process (eager communication on regular memory).");
  m.def("all_gather_bytes", &all_gather_bytes, "Every rank's bytes, in rank order (every rank calls it).");

  py::class_<Program>(m, "Program")
      .def(py::init([](const std::string& text, const std::string& file, bool overlap, int max_in_flight, bool verify) {
             py::gil_scoped_release nogil;
             return std::make_unique<Program>(text, file, overlap, max_in_flight, verify);
           }),
           py::arg("text"), py::arg("file"), py::arg("overlap") = true, py::arg("max_in_flight") = 0,
           py::arg("verify") = false)
      .def("run", [](Program& p, const std::vector<Tensor>& in) {
        py::gil_scoped_release nogil;
        return p.run(in);
      })
      .def("explain", &Program::explain)
      .def("ir", &Program::ir)
      .def("stats", &Program::stats)
      .def("set_tracing", &Program::set_tracing)
      .def("trace_json", &Program::trace_json);

  m.def("run_eager_sf", [](const std::string& text, const std::string& file, const std::vector<Tensor>& inputs) {
    require_init("run_eager_sf");
    auto& w = dist::world();
    py::gil_scoped_release nogil;
    auto g = ir::parse_graph(text, {.file = file, .rank = w.rank(), .world = w.size()});
    std::vector<IValue> in(inputs.begin(), inputs.end());
    return exec::run_eager(*g, in);
  }, "symmflow's eager interpreter on a .sf program (the bitwise reference for compiled runs).");
}
