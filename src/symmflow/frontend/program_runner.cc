#include "symmflow/frontend/program_runner.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <regex>
#include <set>

#include "symmflow/exec/bitwise_diff.h"
#include "symmflow/exec/comm_match.h"
#include "symmflow/exec/explain.h"
#include "symmflow/exec/input_fill.h"
#include "symmflow/exec/input_files.h"
#include "symmflow/exec/interpreter.h"
#include "symmflow/exec/npy.h"
#include "symmflow/ir/exec_plan.h"
#include "symmflow/ir/parser.h"
#include "symmflow/kernels/copy.h"
#include "symmflow/passes/pipeline.h"
#include "symmflow/runtime/copy_stats.h"
#include "symmflow/runtime/symm.h"
#include "symmflow/runtime/world.h"

namespace symmflow::frontend {

using namespace exec;

namespace {

namespace fs = std::filesystem;

// Counts the bytes an eager run holds at once (its peak), for --json. The counts
// are shared with the storages' deleters: the outputs and inputs it allocated
// outlive the tracker (ASan saw the deleters write into the tracker's dead stack
// frame when they held `this`).
class PeakTracker : public Allocator {
 public:
  explicit PeakTracker(Allocator& base) : base_(base) {}
  std::shared_ptr<Storage> allocate(size_t nbytes) override {
    auto s = base_.allocate(nbytes);
    counts_->live += int64_t(nbytes);
    counts_->peak = std::max(counts_->peak, counts_->live);
    void* data = s->data();
    return std::make_shared<Storage>(data, nbytes,
                                     [counts = counts_, s, nbytes](void*) { counts->live -= int64_t(nbytes); });
  }
  int64_t peak() const { return counts_->peak; }

 private:
  struct Counts {
    int64_t live = 0, peak = 0;
  };
  Allocator& base_;
  std::shared_ptr<Counts> counts_ = std::make_shared<Counts>();
};

DType scalar_dtype(ir::ValueKind k) {
  return k == ir::ValueKind::Int ? DType::i64 : k == ir::ValueKind::Float ? DType::f64 : DType::boolean;
}

std::vector<IValue> make_inputs(const ir::Graph& g, const RunRequest& req, int rank,
                                const std::vector<bool>& symmetric) {
  std::vector<IValue> out;
  for (size_t k = 0; k < g.inputs().size(); ++k) {
    const ir::Value* v = g.inputs()[k];
    if (!v->is_tensor()) {
      out.push_back(scalar_input(scalar_dtype(v->kind()), req.seed, int(k), rank));
      continue;
    }
    std::optional<symm::Scope> scope;
    if (symmetric[k]) scope.emplace();  // an op needs it symmetric, as eager code would allocate it
    const auto& type = v->type();
    std::optional<Tensor> file;
    if (!req.inputs_dir.empty()) file = read_input_file(req.inputs_dir, v->name(), type, rank);
    Tensor t;
    if (file) {
      t = *file;
      if (symmetric[k] && !t.is_symmetric()) {
        Tensor s = Tensor::empty(type.sizes.to_vector(), type.dtype);
        kernels::copy_(s, t);
        t = s;
      }
    } else {
      t = Tensor::empty(type.sizes.to_vector(), type.dtype);
      fill_input(t, req.seed, int(k), rank);
    }
    out.emplace_back(t);
  }
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

template <class F>
std::vector<Tensor> timed(int iters, double* median_s, F&& run) {
  std::vector<double> t;
  std::vector<Tensor> outs;
  for (int i = 0; i < std::max(1, iters); ++i) {
    auto t0 = std::chrono::steady_clock::now();
    outs = run();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  *median_s = median(t);
  return outs;
}

void save(const ir::Graph& g, const std::vector<Tensor>& outs, const std::vector<IValue>& inputs,
          const std::string& dir, int rank) {
  fs::create_directories(dir);
  for (size_t i = 0; i < outs.size(); ++i)
    write_npy((fs::path(dir) / fmt::format("out{}.rank{}.npy", i, rank)).string(), outs[i]);
  for (size_t k = 0; k < inputs.size(); ++k)
    if (inputs[k].is_tensor())
      write_npy((fs::path(dir) / fmt::format("{}.rank{}.npy", g.inputs()[k]->name(), rank)).string(),
                inputs[k].to_tensor());
}

}  // namespace

void check_inputs_dir(const std::string& dir, const std::vector<const ir::Graph*>& graphs) {
  const int world = int(graphs.size());
  std::set<std::string> read;      // the file names some rank of this job reads
  std::vector<std::string> names;  // every tensor input, in signature order, each once
  for (int r = 0; r < world; ++r)
    for (const ir::Value* v : graphs[r]->inputs()) {
      if (!v->is_tensor()) continue;
      if (std::find(names.begin(), names.end(), "%" + v->name()) == names.end()) names.push_back("%" + v->name());
      for (const auto& f : input_file_names(v->name(), r)) read.insert(f);
    }
  // NAME.rank<R>.npy for a rank beyond this job is kept for a larger one (one
  // folder can serve several world sizes) when NAME is an input.
  auto for_larger_job = [&](const std::string& file) {
    static const std::regex ranked(R"((.+)\.rank([0-9]+)\.npy)");
    std::smatch m;
    return std::regex_match(file, m, ranked) && std::stoll(m[2].str().substr(0, 9)) >= world &&
           std::find(names.begin(), names.end(), "%" + m[1].str()) != names.end();
  };
  std::vector<std::string> stray;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string file = e.path().filename().string();
    if (e.path().extension() == ".npy" && !read.count(file) && !for_larger_job(file)) stray.push_back(file);
  }
  if (stray.empty()) return;
  std::sort(stray.begin(), stray.end());
  const std::string program = graphs.empty() ? "" : graphs[0]->file();
  fail("--inputs {}: {} {} no input of {} (its tensor inputs: {}; at {} rank{} a file is read as NAME.npy or "
       "NAME.rank<R>.npy, R < {}, by the ranks whose graph has the input NAME): rename or remove {}",
       dir, fmt::join(stray, ", "), stray.size() == 1 ? "matches" : "match", program,
       names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", ")), world, world == 1 ? "" : "s",
       world, stray.size() == 1 ? "it" : "them");
}

RankReport run_on_this_rank(const RunRequest& req) {
  auto& world = dist::world();
  RankReport rep;
  rep.rank = world.rank();
  auto g = ir::parse_graph_file(req.file, world.rank(), world.size());
  // Every send has its receive, every rank the same collectives: checked across
  // the ranks before anything runs (exec/comm_match.h).
  match_communication(*g);
  auto needs = symmetric_needs(*g);
  const bool eager = req.mode != RunMode::compiled;
  const bool compiled = req.mode != RunMode::eager;

  std::vector<IValue> eager_in, compiled_in;
  std::vector<Tensor> eager_out, compiled_out;
  if (eager) {
    eager_in = make_inputs(*g, req, rep.rank, needs.input);
    PeakTracker peak(current_allocator());
    AllocatorGuard guard(peak);
    auto before = dist::staged_copy_stats();
    eager_out = timed(req.iters, &rep.eager_s, [&] { return run_eager(*g, eager_in); });
    auto after = dist::staged_copy_stats();
    rep.eager_staged_copies = after.count - before.count;
    rep.eager_staged_copy_bytes = after.bytes - before.bytes;
    rep.eager_peak_bytes = peak.peak();
  }
  std::unique_ptr<CompiledProgram> prog;
  if (compiled) {
    auto cg = g->clone();
    passes::PipelineOptions opts;
    opts.dump = req.dump;
    opts.stop_after = req.stop_after;
    opts.placement = req.placement;
    opts.schedule = req.schedule;
    opts.check_hazards |= req.check_hazards;
    passes::optimize(*cg, opts);
    prog = std::make_unique<CompiledProgram>(std::move(cg));
    if (req.trace) prog->set_timeline(&rep.trace);
    std::vector<bool> symmetric_inputs = needs.input;
    if (req.symmetric_inputs) symmetric_inputs.assign(symmetric_inputs.size(), true);
    compiled_in = make_inputs(*g, req, rep.rank, symmetric_inputs);
    compiled_out = timed(req.iters, &rep.compiled_s, [&] { return prog->run(compiled_in); });
    rep.stats = prog->stats();
    if (req.explain) rep.explain = explain(prog->graph(), rep.stats.copies);
    for (const auto& t : compiled_out) rep.output_bytes += int64_t(t.nbytes());
    const auto& pg = prog->graph();
    for (const ir::Instruction& s : pg.exec_plan()->instructions)
      if (s.algorithm != ir::Algorithm::none)
        rep.algorithms.emplace_back(fmt::format("{}:{} {}", s.node->loc().line, s.node->loc().col, s.node->op_name()),
                                    ir::algorithm_name(s.algorithm));
    rep.decisions = pg.plan().decisions;
  }
  if (req.explain && !compiled) {  // eager only: what compiling would do (staged copies not measured)
    auto cg = g->clone();
    passes::PipelineOptions opts;
    opts.placement = req.placement;
    opts.schedule = req.schedule;
    passes::optimize(*cg, opts);
    rep.explain = explain(*cg);
  }
  if (eager && compiled) {
    rep.compared = true;
    for (size_t i = 0; i < eager_out.size() && rep.match; ++i) {
      // An aten::empty returned as it is holds whatever the memory held: nothing to compare.
      const ir::Node* p = g->outputs()[i]->producer();
      if (p && p->schema().ns == "aten" && p->schema().name == "empty") continue;
      ++rep.outputs_compared;
      std::string d = first_bitwise_difference(eager_out[i], compiled_out[i]);
      if (!d.empty()) {
        rep.match = false;
        rep.first_difference = fmt::format("rank {}: output {} (%{}) {}", rep.rank, i, g->outputs()[i]->name(), d);
      }
    }
    for (size_t k = 0; k < eager_in.size() && rep.match; ++k) {
      if (!eager_in[k].is_tensor()) continue;
      ++rep.inputs_compared;
      std::string d = first_bitwise_difference(eager_in[k].to_tensor(), compiled_in[k].to_tensor());
      if (!d.empty()) {
        rep.match = false;
        rep.first_difference = fmt::format("rank {}: input %{} (its final contents) {}", rep.rank,
                                           g->inputs()[k]->name(), d);
      }
    }
  }
  rep.program = "@" + g->name() + (g->rank_set() ? " ranks " + g->rank_set()->str() : "");
  if (req.keep_outputs) {
    const auto& outs = compiled ? compiled_out : eager_out;
    for (size_t i = 0; i < outs.size(); ++i) rep.outputs.emplace_back(g->outputs()[i]->name(), kernels::clone(outs[i]));
  }
  if (!req.save_dir.empty()) {
    if (compiled) save(*g, compiled_out, compiled_in, req.save_dir, rep.rank);
    else save(*g, eager_out, eager_in, req.save_dir, rep.rank);
  }
  return rep;
}

}  // namespace symmflow::frontend
