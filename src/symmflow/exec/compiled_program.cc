#include "symmflow/exec/compiled_program.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "symmflow/exec/interpreter.h"
#include "symmflow/exec/rendezvous_sends.h"
#include "symmflow/kernels/copy.h"
#include "symmflow/ops/work_registry.h"
#include "symmflow/runtime/copy_stats.h"
#include "symmflow/runtime/world.h"

namespace symmflow::exec {

namespace {

const ir::ExecPlan& plan_of(const ir::Graph& g) {
  const ir::ExecPlan* p = g.exec_plan();
  SF_CHECK(p && p->built, "@{}: no executable plan: compile the graph with passes::optimize before running it",
           g.name());
  SF_CHECK(p->instructions.size() == g.size(),
           "@{}: the executable plan has {} instructions for {} nodes: the graph changed after it was compiled",
           g.name(), p->instructions.size(), g.size());
  return *p;
}

dist::AllReduceAlgo runtime_algo(ir::Algorithm a) {
  switch (a) {
    case ir::Algorithm::one_shot: return dist::AllReduceAlgo::one_shot;
    case ir::Algorithm::two_shot: return dist::AllReduceAlgo::two_shot;
    default: return dist::AllReduceAlgo::automatic;
  }
}

// Before the plan is bound: every rank's sends that may go rendezvous, decided
// from every rank's program (collective, exec/rendezvous_sends.h).
const ir::Graph& with_rendezvous_sends(ir::Graph& g) {
  plan_of(g);
  plan_rendezvous_sends(g);
  return g;
}

}  // namespace

CompiledProgram::CompiledProgram(std::unique_ptr<ir::Graph> g)
    : g_(std::move(g)), plan_(plan_of(with_rendezvous_sends(*g_))) {
  pg_.assign(plan_.instructions.size(), nullptr);
  staging_owners_ = dist::new_staging_owners(int64_t(plan_.instructions.size()));
  caller_symmetric_.assign(g_->inputs().size(), false);
  copies_ = copy_report(*g_, caller_symmetric_);
  arenas_ = std::make_unique<ProgramArenas>(*g_);
  symmetric_inputs_ = std::make_unique<SymmetricInputCheck>(*g_, *arenas_);
  temps_ = std::make_unique<ReplayAllocator>(regular_allocator());
}

CompiledProgram::~CompiledProgram() = default;

void CompiledProgram::check_guards(std::span<const IValue> inputs) const {
  const auto& params = g_->inputs();
  SF_CHECK(inputs.size() == params.size(), "@{}: the program takes {} inputs, got {}", g_->name(),
           params.size(), inputs.size());
  for (size_t i = 0; i < params.size(); ++i) {
    const ir::Value* p = params[i];
    if (!p->is_tensor()) continue;
    SF_CHECK(inputs[i].is_tensor(), "@{}: input %{} must be a tensor, got {}", g_->name(), p->name(),
             inputs[i].kind_name());
    const Tensor& t = inputs[i].to_tensor();
    SF_CHECK(t.dtype() == p->type().dtype && t.sizes() == p->type().sizes && t.strides() == p->type().strides &&
                 t.storage_offset() == p->type().offset,
             "@{}: input %{} was compiled for {} with strides [{}] at offset {}, got {} with strides [{}] at offset {}",
             g_->name(), p->name(), p->type().str(), fmt::join(p->type().strides, ", "), p->type().offset,
             t.type_string(), fmt::join(t.strides(), ", "), t.storage_offset());
  }
}

bool CompiledProgram::arena_backed(const Tensor& t) const {
  const char* p = static_cast<const char*>(t.storage()->data());
  const char* base = static_cast<const char*>(arenas_->base(ir::Arena::symmetric));
  return base && p >= base && p < base + arenas_->bytes(ir::Arena::symmetric);
}

const void* CompiledProgram::buffer_address(const ir::Value* v) const {
  auto s = arenas_->storage(v->id());
  return s ? s->data() : nullptr;
}

// What one run keeps between its phases.
struct CompiledProgram::RunState {
  std::vector<std::pair<Tensor, Tensor>> copy_back;  // (caller's tensor, its symmetric copy)
  std::vector<double> started;                       // the trace: when each step began
  // The runtime's staged copies: each step runs as its own staging owner
  // (runtime/copy_stats.h), and an asynchronous op's work keeps its start's,
  // so every copy is charged to the op that made it, whichever step's progress
  // moved its bytes. Copies no step owns (none in a compiled run as yet) stay
  // one unattributed entry.
  dist::CopyStats staged_before;
};

// Bind the inputs, run the plan's instructions in order, collect the outputs.
std::vector<Tensor> CompiledProgram::run(std::span<const IValue> inputs) {
  check_guards(inputs);
  RunState r;
  r.staged_before = dist::staged_copy_stats();
  // Every run makes the same allocations in the same order: replay them.
  temps_->rewind();
  if (scoped_) scoped_->rewind();
  const size_t allocations_before = base_allocations();
  bind_inputs(inputs, r);
  for (size_t i = 0; i < plan_.instructions.size(); ++i) run_step(i, r);
  std::vector<Tensor> outs = collect_outputs(r);
  attribute_staged(r);
  last_.allocations = int64_t(base_allocations() - allocations_before);
  return outs;
}

void CompiledProgram::bind_inputs(std::span<const IValue> inputs, RunState& r) {
  env_.assign(g_->num_values(), IValue());
  last_.executor_copies = last_.executor_copy_bytes = last_.misplaced = 0;
  // The copy report follows which inputs the caller passes symmetric.
  std::vector<bool> caller_symmetric(inputs.size(), false);
  for (size_t i = 0; i < inputs.size(); ++i)
    caller_symmetric[i] = inputs[i].is_tensor() && inputs[i].to_tensor().is_symmetric();
  if (caller_symmetric != caller_symmetric_) {
    caller_symmetric_ = std::move(caller_symmetric);
    copies_ = copy_report(*g_, caller_symmetric_);
  } else {
    std::erase_if(copies_.entries, [](const CopyEntry& e) { return e.origin == CopyOrigin::staged; });
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::Value* p = g_->inputs()[i];
    IValue v = inputs[i];
    if (plan_.input_symmetric[i] && !v.to_tensor().is_symmetric()) {
      // Placement wants it symmetric and the caller's tensor is not: copy it in.
      const Tensor& t = v.to_tensor();
      Tensor s(arenas_->storage(p->id()), t.dtype(), t.sizes(), t.strides(), t.storage_offset());
      if (plan_.input_copied_in[i]) {  // not when a receive overwrites it whole before any read
        kernels::copy_(s, t);
        ++last_.executor_copies;
        last_.executor_copy_bytes += int64_t(s.nbytes());
      }
      if (plan_.input_written[i]) r.copy_back.emplace_back(t, s);
      v = IValue(s);
    }
    env_[size_t(p->id())] = v;
  }
  symmetric_inputs_->run(*g_, env_);  // the ranks compare once per signature
  if (timeline_) timeline_->events.clear();
  const size_t steps = plan_.instructions.size();
  r.started.assign(steps, 0);
  in_flight_.clear();
  open_.assign(steps, 0);
}

void CompiledProgram::run_step(size_t i, RunState& r) {
  const ir::Instruction& s = plan_.instructions[i];
  if (!s.group.empty() && !pg_[i]) {
    try {
      pg_[i] = &dist::group(s.group);
    } catch (...) {
      rethrow_at(site_of(*g_, *s.node));  // say which op and where
    }
  }
  const dist::ScopedStagingOwner owner(staging_owners_ + int64_t(i));
  if (!in_flight_.empty()) progress_in_flight();
  const double t0 = timeline_ ? Timeline::now_us() : 0;
  OpContext ctx(DispatchKey::CPU);
  dist::AllReduceAlgo algo = runtime_algo(s.algorithm);
  if (algo != dist::AllReduceAlgo::automatic) ctx.set(&algo);
  ops::StartAsync async;
  if (s.start_async) ctx.set(&async);
  ops::SendsRendezvous rendezvous{&s.rendezvous};
  if (!s.rendezvous.empty()) ctx.set(&rendezvous);
  if (s.scoped) {
    if (!scoped_) scoped_ = std::make_unique<ReplayAllocator>(dist::world().heap().allocator());
    run_node(*g_, *s.node, env_, scoped_.get(), &ctx);
  } else {
    std::deque<PlannedAllocator::Result> results;
    for (int id : s.fresh) {
      if (std::find(s.planned.begin(), s.planned.end(), id) == s.planned.end()) {
        results.push_back({nullptr, size_t(g_->value(size_t(id))->type().storage_bytes())});
        continue;
      }
      auto storage = arenas_->storage(id);
      const size_t nbytes = storage->nbytes();
      results.push_back({std::move(storage), nbytes});
    }
    PlannedAllocator alloc(std::move(results), *temps_);
    if (g_->plan().sentinels) arenas_->arm_sentinels(s.planned);
    run_node(*g_, *s.node, env_, &alloc, &ctx);
    if (g_->plan().sentinels) arenas_->check_sentinels(s.planned, *g_);
    for (int id : s.planned)
      if (env_[size_t(id)].to_tensor().storage() != arenas_->storage(id)) ++last_.misplaced;
  }
  if (!s.waits.empty()) {
    open_[i] = int(s.waits.size());
    in_flight_.push_back(int(i));
  }
  if (s.start >= 0 && --open_[size_t(s.start)] == 0)
    in_flight_.erase(std::find(in_flight_.begin(), in_flight_.end(), s.start));
  if (timeline_) {
    const double t1 = Timeline::now_us();
    r.started[i] = t0;
    auto where = [&](const ir::Node* n) {
      return n->loc().line ? fmt::format("{}:{}", g_->file(), n->loc().line) : std::string();
    };
    timeline_->events.push_back({s.label, where(s.node), TraceEvent::compute, t0, t1 - t0});
    if (s.start >= 0 && open_[size_t(s.start)] == 0) {  // its last wait: the op's whole window
      const ir::Instruction& st = plan_.instructions[size_t(s.start)];
      timeline_->events.push_back({st.label, where(st.node), TraceEvent::comm, r.started[size_t(s.start)],
                                   t1 - r.started[size_t(s.start)]});
    }
  }
}

std::vector<Tensor> CompiledProgram::collect_outputs(RunState& r) {
  for (auto& [caller, copy] : r.copy_back) {
    kernels::copy_(caller, copy);
    ++last_.executor_copies;
    last_.executor_copy_bytes += int64_t(copy.nbytes());
  }
  std::vector<Tensor> outs;
  for (const ir::Value* v : g_->outputs()) {
    Tensor t = env_[size_t(v->id())].to_tensor();
    if (t.is_symmetric() && arena_backed(t)) {
      // The program's symmetric buffer: the caller gets a copy it may keep.
      t = kernels::clone(t);
      ++last_.executor_copies;
      last_.executor_copy_bytes += int64_t(t.nbytes());
    }
    outs.push_back(t);
  }
  // The caller keeps what it is returned: those slots are allocated afresh
  // on every later run.
  if (runs_++ == 0)
    for (const auto& t : outs) {
      temps_->release(t.storage().get());
      if (scoped_) scoped_->release(t.storage().get());
    }
  env_.clear();  // nothing but the outputs stays referenced between runs
  return outs;
}

void CompiledProgram::attribute_staged(const RunState& r) {
  const auto staged_after = dist::staged_copy_stats();
  int64_t attributed = 0, attributed_bytes = 0;
  for (size_t i = 0; i < plan_.instructions.size(); ++i) {
    const dist::CopyStats mine = dist::take_staged_copies(staging_owners_ + int64_t(i));
    copies_.add_staged(plan_.instructions[i].node, int64_t(mine.count), int64_t(mine.bytes));
    attributed += int64_t(mine.count);
    attributed_bytes += int64_t(mine.bytes);
  }
  copies_.add_staged(nullptr, int64_t(staged_after.count - r.staged_before.count) - attributed,
                     int64_t(staged_after.bytes - r.staged_before.bytes) - attributed_bytes);
}

size_t CompiledProgram::base_allocations() const {
  return temps_->base_allocations() + (scoped_ ? scoped_->base_allocations() : 0);
}

void CompiledProgram::progress_in_flight() {
  dist::ProcessGroup* last = nullptr;
  for (int i : in_flight_)
    if (dist::ProcessGroup* g = pg_[size_t(i)]; g != last) dist::progress(*(last = g));
}

ProgramStats CompiledProgram::stats() const {
  ProgramStats s = last_;
  s.runs = runs_;
  s.input_offset_checks = symmetric_inputs_->exchanges();
  s.copies = copies_;
  s.buffers = g_->plan().slots.size();
  s.regular_bytes = arenas_->bytes(ir::Arena::regular);
  s.temporary_bytes = int64_t(temps_->bytes());
  s.symmetric_bytes = arenas_->bytes(ir::Arena::symmetric) + (scoped_ ? int64_t(scoped_->bytes()) : 0);
  return s;
}

}  // namespace symmflow::exec
