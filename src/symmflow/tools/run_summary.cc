#include "symmflow/tools/run_summary.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "symmflow/core/hash.h"
#include "symmflow/exec/bitwise_diff.h"

namespace symmflow::tools {

namespace {
constexpr int64_t kFirstValues = 6;  // enough to recognize a result, short enough for one line
}  // namespace

std::string outputs_block(const frontend::RankReport& r, int world, bool compiled) {
  const size_t n = r.outputs.size();
  std::string s = fmt::format("{}: rank {} of {}, {} output{} ({})\n", r.program, r.rank, world,
                              n == 0 ? "no" : std::to_string(n), n == 1 ? "" : "s", compiled ? "compiled" : "eager");
  size_t name_w = 0, type_w = 0;
  for (const auto& [name, t] : r.outputs) {
    name_w = std::max(name_w, name.size() + 1);
    type_w = std::max(type_w, t.type_string().size());
  }
  for (const auto& [name, t] : r.outputs) {
    // The outputs are contiguous copies: their bytes are the data of the .npy
    // file --save-outputs writes.
    std::vector<std::string> first;
    for (int64_t i = 0; i < std::min<int64_t>(t.numel(), kFirstValues); ++i) first.push_back(exec::element_text(t, i));
    if (t.numel() > kFirstValues) first.push_back("...");
    s += fmt::format("  {:<{}}  {:<{}}  fnv1a {:016x}  [{}]\n", "%" + name, name_w, t.type_string(), type_w,
                     fnv1a(t.numel() ? t.data_ptr() : nullptr, t.nbytes()), fmt::join(first, ", "));
  }
  return s;
}

std::string rank_text(const frontend::RankReport& r, const std::string& block) { return r.program + "\n" + block; }

std::string distinct_blocks(const std::vector<std::string>& rank_texts) {
  std::set<std::string> seen;
  std::string out;
  for (const auto& text : rank_texts) {
    const size_t nl = text.find('\n');
    if (seen.insert(text.substr(0, nl)).second) out += text.substr(nl + 1);
  }
  return out;
}

std::string times_line(const frontend::RankReport& r, int iters, bool eager, bool compiled) {
  std::string s = fmt::format("median of {} run{} on rank {}:", iters, iters == 1 ? "" : "s", r.rank);
  if (eager) s += fmt::format(" eager {:.3g} ms", r.eager_s * 1e3);
  if (eager && compiled) s += ",";
  if (compiled) s += fmt::format(" compiled {:.3g} ms", r.compiled_s * 1e3);
  return s + "\n";
}

}  // namespace symmflow::tools
