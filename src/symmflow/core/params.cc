// The declared SYMMFLOW_* variables (params.h). To add one: a row in table()
// below, a row in docs/runtime.md's "Environment variables" table (a test
// compares them), and a typed accessor call where it is used.
#include "symmflow/core/params.h"

#include <fmt/format.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

#include "symmflow/core/error.h"

extern char** environ;

namespace symmflow::params {

namespace {

constexpr int64_t kMaxBytes = int64_t(1) << 50;  // 1 PiB: far beyond any heap or threshold

// A function-local static: a static initializer elsewhere may read a variable.
const std::vector<Spec>& table() {
  // clang-format off
  // name, kind, default, lo, hi, words, set by, doc[, secret]
  static const std::vector<Spec> t = {
  // Set by `symmflow launch` (or runtime::launch_fn) for every rank.
  {"SYMMFLOW_RANK", Kind::integer, "none", 0, kMaxRanks - 1, "", SetBy::launcher,
   "this process's rank, 0..W-1"},
  {"SYMMFLOW_WORLD_SIZE", Kind::integer, "none", 1, kMaxRanks, "", SetBy::launcher,
   "number of ranks W"},
  {"SYMMFLOW_LOCAL_RANK", Kind::integer, "none", 0, kMaxRanks - 1, "", SetBy::launcher,
   "rank on this node (unset: SYMMFLOW_RANK)"},
  {"SYMMFLOW_LOCAL_WORLD_SIZE", Kind::integer, "none", 1, kMaxRanks, "", SetBy::launcher,
   "ranks on this node (unset: SYMMFLOW_WORLD_SIZE)"},
  {"SYMMFLOW_RENDEZVOUS", Kind::string, "none", 0, 0, "", SetBy::launcher,
   "name of the job's control block, /sf-<16 hex job id>-ctl-<32 hex>"},
  {"SYMMFLOW_JOB_TOKEN", Kind::string, "none", 0, 0, "", SetBy::launcher,
   "128 random bits (32 hex); attach is refused without the job's token", /*secret=*/true},
  // Runtime.
  {"SYMMFLOW_BACKEND", Kind::choice, "none", 0, 0, "shm|mpi", SetBy::user,
   "backend; unset: mpi when an MPI launcher started the process, else shm (docs/multi-node.md)"},
  {"SYMMFLOW_SYMM_HEAP_BYTES", Kind::bytes, "1G", 1, kMaxBytes, "", SetBy::user,
   "symmetric heap per rank and group (tmpfs commits only touched pages)"},
  {"SYMMFLOW_CHECK_HEAP", Kind::boolean, "0", 0, 0, "", SetBy::user,
   "1: verify every allocation/free sequence across ranks (tests always do)"},
  {"SYMMFLOW_TIMEOUT", Kind::seconds, "300", 0, 0, "", SetBy::user,
   "deadline of every wait in seconds; dist::set_timeout() overrides"},
  {"SYMMFLOW_YIELD_US", Kind::integer, "none", 0, 10'000'000, "", SetBy::user,
   "length of the sched_yield phase of a wait in us; unset: 100, 0 when oversubscribed"},
  {"SYMMFLOW_OVERSUBSCRIBED", Kind::boolean, "none", 0, 0, "", SetBy::user,
   "force the oversubscribed wait policy on or off; unset: ranks on this host > CPUs they may use"},
  {"SYMMFLOW_RANKS_PER_NODE", Kind::integer, "none", 1, kMaxRanks, "", SetBy::user,
   "mpi backend: simulate nodes of k consecutive ranks"},
  {"SYMMFLOW_DEBUG", Kind::choice, "none", 0, 0, "WARN|INFO", SetBy::user,
   "INFO: each rank logs backend, topology and each collective's algorithm to stderr; unset: quiet"},
  // Collectives.
  {"SYMMFLOW_ONE_SHOT_MAX_BYTES", Kind::bytes, "2K", 1, kMaxBytes, "", SetBy::user,
   "all_reduce automatic: one-shot up to this size, two-shot above (measured)"},
  {"SYMMFLOW_PUSH_MAX_BYTES", Kind::bytes, "2K", 1, kMaxBytes, "", SetBy::user,
   "push per-peer payloads up to this size into peers' slots (1 sync), pull above (2 syncs)"},
  {"SYMMFLOW_NT_MIN_BYTES", Kind::bytes, "8M", 1, kMaxBytes, "", SetBy::user,
   "collective outputs from this size on use non-temporal stores"},
  {"SYMMFLOW_NET_ONE_SHOT_MAX_BYTES", Kind::bytes, "256K", 1, kMaxBytes, "", SetBy::user,
   "mpi backend: all_reduce between nodes goes one-shot while a leader sends at most this much"},
  {"SYMMFLOW_NET_CHUNK_BYTES", Kind::bytes, "512K", 1, kMaxBytes, "", SetBy::user,
   "mpi backend: pipeline chunk of the relay between nodes"},
  // Simulated link (runtime/sim_link.h): every transfer as if over a slower link.
  {"SYMMFLOW_SIM_LINK_LATENCY_US", Kind::number, "0", 0, 0, "", SetBy::user,
   "simulated link: latency added to every P2P op and collective crossing a link, in us; 0: off"},
  {"SYMMFLOW_SIM_LINK_GBPS", Kind::number, "0", 0, 0, "", SetBy::user,
   "simulated link: bandwidth in Gbit/s of what a rank puts on the link (ring algorithms); 0: infinite"},
  // Kernels and compiler.
  {"SYMMFLOW_BLAS_THREADS", Kind::integer, "1", 1, 1024, "", SetBy::user,
   "intra-op threads of matmul: oneDNN (f32) and OpenBLAS (f64); one per rank by default"},
  {"SYMMFLOW_ALLOC_CACHE", Kind::bytes, "256M", 0, kMaxBytes, "", SetBy::user,
   "freed regular blocks of 1 MiB and more kept for reuse, at most this many bytes; 0: off (and unset under ASan)"},
  {"SYMMFLOW_SIMD", Kind::choice, "none", 0, 0, "avx2|avx512", SetBy::user,
   "widest vector ISA of the kernels' loops and f32 exp, tanh, erf...; unset: the CPU's widest (the same bits either way)"},
  {"SYMMFLOW_VERIFY", Kind::boolean, "0", 0, 0, "", SetBy::user,
   "1: run the hazard verifier after every compile (debug builds always do; the test suite sets it)"},
  {"SYMMFLOW_TUNE_FILE", Kind::path, "$HOME/.cache/symmflow/tune.json", 0, 0, "", SetBy::user,
   "thresholds measured by `symmflow tune`, read by collective_lowering"},
  };
  // clang-format on
  return t;
}

// The parsed value of one variable at one reading of the environment.
struct Value {
  bool set = false;
  std::string raw;    // as set ("" when unset)
  std::string error;  // non-empty: raw is not acceptable
  int64_t i = 0;      // integer, bytes, boolean
  double d = 0;       // seconds, number
  std::string s;      // choice (declared spelling), string, path
};

struct Slot {
  std::atomic<const Value*> cur{nullptr};
};

struct Registry {
  std::unordered_map<std::string_view, size_t> index;
  std::unique_ptr<Slot[]> slots;
  std::mutex mu;                                // loads and reload
  std::vector<std::unique_ptr<Value>> values;   // every Value ever made: handed-out
                                                // references stay valid after reload()
  Registry() : slots(new Slot[table().size()]) {
    for (size_t i = 0; i < table().size(); ++i) {
      bool fresh = index.emplace(table()[i].name, i).second;
      if (!fresh) throw std::logic_error(fmt::format("params: {} declared twice", table()[i].name));
    }
  }
};

Registry& registry() {
  static Registry r;
  return r;
}

const char* env_raw(const char* name) { return std::getenv(name); }  // the one getenv

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = char(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

std::vector<std::string> split_words(const char* words) {
  std::vector<std::string> r;
  std::string_view w = words;
  while (!w.empty()) {
    size_t bar = w.find('|');
    r.emplace_back(w.substr(0, bar));
    if (bar == std::string_view::npos) break;
    w.remove_prefix(bar + 1);
  }
  return r;
}

std::optional<int64_t> parse_int(const std::string& s) {
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || end == s.c_str() || *end != '\0') return std::nullopt;
  return int64_t(v);
}

// 0 only where `allow_zero` (a variable whose range starts at 0: "off").
std::optional<size_t> try_parse_bytes(const std::string& text, bool allow_zero = false) {
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (errno != 0) return std::nullopt;
  unsigned long long mult = 1;
  if (*end) {
    switch (*end) {
      case 'k': case 'K': mult = 1ull << 10; break;
      case 'm': case 'M': mult = 1ull << 20; break;
      case 'g': case 'G': mult = 1ull << 30; break;
      default: return std::nullopt;
    }
    std::string_view rest = end + 1;
    if (!rest.empty() && rest != "B" && rest != "iB") return std::nullopt;
  }
  if ((v == 0 && !allow_zero) || v > (~0ull) / mult) return std::nullopt;
  return size_t(v * mult);
}

// Parses `raw` as `sp` says; fills v.error when it is not acceptable.
void parse_into(const Spec& sp, const std::string& raw, Value& v) {
  auto bad = [&] { v.error = fmt::format("{}: expected {}, found '{}'", sp.name, accepts(sp), raw); };
  switch (sp.kind) {
    case Kind::integer: {
      auto x = parse_int(raw);
      if (!x || *x < sp.lo || *x > sp.hi) return bad();
      v.i = *x;
      return;
    }
    case Kind::bytes: {
      auto x = try_parse_bytes(raw, sp.lo == 0);
      if (!x || int64_t(*x) < sp.lo || int64_t(*x) > sp.hi) return bad();
      v.i = int64_t(*x);
      return;
    }
    case Kind::seconds: {
      char* end = nullptr;
      errno = 0;
      double x = std::strtod(raw.c_str(), &end);
      if (errno != 0 || end == raw.c_str() || *end != '\0' || !std::isfinite(x) || !(x > 0))
        return bad();
      v.d = x;
      return;
    }
    case Kind::number: {
      char* end = nullptr;
      errno = 0;
      double x = std::strtod(raw.c_str(), &end);
      if (errno != 0 || end == raw.c_str() || *end != '\0' || !std::isfinite(x) || !(x >= 0))
        return bad();
      v.d = x;
      return;
    }
    case Kind::boolean:
      if (raw != "0" && raw != "1") return bad();
      v.i = raw == "1";
      return;
    case Kind::choice:
      for (const auto& w : split_words(sp.words))
        if (lower(w) == lower(raw)) {
          v.s = w;
          return;
        }
      return bad();
    case Kind::string:
    case Kind::path:
      v.s = raw;
      return;
  }
}

std::unique_ptr<Value> read_value(const Spec& sp) {
  auto v = std::make_unique<Value>();
  const char* e = env_raw(sp.name);
  if (e && *e) {
    v->set = true;
    v->raw = e;
    parse_into(sp, v->raw, *v);
  } else if (std::strcmp(sp.dflt, "none") != 0) {
    parse_into(sp, sp.dflt, *v);
    if (!v->error.empty())  // a bad row in table()
      throw std::logic_error(fmt::format("params: the default of {} does not parse: {}", sp.name, v->error));
  }
  return v;
}

size_t index_of(std::string_view name) {
  auto& r = registry();
  auto it = r.index.find(name);
  if (it == r.index.end())
    throw std::logic_error(fmt::format(
        "params: {} is not declared (add it to the table in src/symmflow/core/params.cc)", name));
  return it->second;
}

// The cached value of variable `i`, reading the environment on first use.
const Value& value_at(size_t i) {
  auto& r = registry();
  if (const Value* v = r.slots[i].cur.load(std::memory_order_acquire)) return *v;
  std::lock_guard<std::mutex> lock(r.mu);
  if (const Value* v = r.slots[i].cur.load(std::memory_order_acquire)) return *v;
  r.values.push_back(read_value(table()[i]));
  const Value* v = r.values.back().get();
  r.slots[i].cur.store(v, std::memory_order_release);
  return *v;
}

// The value of `name` for a typed accessor: throws its error; an unset
// variable without default is an Error.
const Value& checked(std::string_view name, Kind want) {
  size_t i = index_of(name);
  const Spec& sp = table()[i];
  if (sp.kind != want)
    throw std::logic_error(fmt::format("params: {} is declared as {}, read as {}", name,
                                       kind_name(sp.kind), kind_name(want)));
  const Value& v = value_at(i);
  if (!v.error.empty()) throw Error(v.error);
  SF_CHECK(v.set || std::strcmp(sp.dflt, "none") != 0, "{} is not set ({}; no default)", sp.name,
           sp.doc);
  return v;
}

}  // namespace

std::string format_bytes(int64_t b) {
  for (auto [shift, suffix] : {std::pair{30, "G"}, std::pair{20, "M"}, std::pair{10, "K"}})
    if (b >= (int64_t(1) << shift) && b % (int64_t(1) << shift) == 0)
      return fmt::format("{}{}", b >> shift, suffix);
  return std::to_string(b);
}

const std::vector<Spec>& specs() { return table(); }

const Spec& spec(std::string_view name) { return table()[index_of(name)]; }

std::string_view kind_name(Kind k) {
  switch (k) {
    case Kind::integer: return "int";
    case Kind::bytes: return "bytes";
    case Kind::seconds: return "seconds";
    case Kind::number: return "number";
    case Kind::boolean: return "bool";
    case Kind::choice: return "enum";
    case Kind::string: return "string";
    case Kind::path: return "path";
  }
  return "?";
}

std::string accepts(const Spec& s) {
  switch (s.kind) {
    case Kind::integer: return fmt::format("an integer in [{}, {}]", s.lo, s.hi);
    case Kind::bytes:
      if (s.lo == 0 && s.hi >= kMaxBytes) return "a size like 0, 4096, 64K, 8M or 1G";
      if (s.lo <= 1 && s.hi >= kMaxBytes) return "a size > 0 like 4096, 64K, 8M or 1G";
      return s.hi >= kMaxBytes ? fmt::format("a size >= {} like 4096, 64K, 8M or 1G", format_bytes(s.lo))
                               : fmt::format("a size in [{}, {}] like 4096, 64K, 8M or 1G",
                                             format_bytes(s.lo), format_bytes(s.hi));
    case Kind::seconds: return "seconds > 0 (e.g. 30, 0.5)";
    case Kind::number: return "a number >= 0 (e.g. 0, 2.5)";
    case Kind::boolean: return "0 or 1";
    case Kind::choice: {
      auto w = split_words(s.words);
      if (w.size() == 2) return w[0] + " or " + w[1];
      std::string r = "one of ";
      for (size_t i = 0; i < w.size(); ++i) r += (i ? ", " : "") + w[i];
      return r;
    }
    case Kind::string: return "any text";
    case Kind::path: return "a file path";
  }
  return "?";
}

bool is_set(std::string_view name) { return value_at(index_of(name)).set; }

int64_t integer(std::string_view name) { return checked(name, Kind::integer).i; }
size_t bytes(std::string_view name) { return size_t(checked(name, Kind::bytes).i); }
double seconds(std::string_view name) { return checked(name, Kind::seconds).d; }
double number(std::string_view name) { return checked(name, Kind::number).d; }
bool flag(std::string_view name) { return checked(name, Kind::boolean).i != 0; }
std::string word(std::string_view name) { return checked(name, Kind::choice).s; }

std::string text(std::string_view name) {
  size_t i = index_of(name);
  const Kind k = table()[i].kind;
  const Value& v = checked(name, k == Kind::path ? Kind::path : Kind::string);
  if (k == Kind::path && !v.set && v.s.rfind("$HOME", 0) == 0) {
    auto home = system_env("HOME");
    return (home && !home->empty() ? *home : std::string(".")) + v.s.substr(5);
  }
  return v.s;
}

std::string raw(std::string_view name) { return value_at(index_of(name)).raw; }

std::string_view source_name(Source s) {
  switch (s) {
    case Source::unset: return "default";
    case Source::environment: return "environment";
    case Source::launcher: return "launcher";
  }
  return "?";
}

std::vector<Entry> all() {
  std::vector<Entry> out;
  for (size_t i = 0; i < table().size(); ++i) {
    const Spec& sp = table()[i];
    const Value& v = value_at(i);
    Entry e{&sp, "", Source::unset, v.error};
    if (v.set) e.source = sp.set_by == SetBy::launcher ? Source::launcher : Source::environment;
    if (!v.set) e.value = std::strcmp(sp.dflt, "none") == 0 ? "(unset)" : sp.dflt;
    else if (sp.secret) e.value = "(set, hidden)";
    else e.value = v.raw;
    out.push_back(std::move(e));
  }
  return out;
}

void validate_all() {
  for (const auto& e : all())
    if (!e.error.empty()) throw Error(e.error);
}

std::vector<std::string> undeclared_in_environment() {
  std::vector<std::string> out;
  auto& r = registry();
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv = *e;
    if (kv.rfind("SYMMFLOW_", 0) != 0) continue;
    std::string_view name = kv.substr(0, kv.find('='));
    if (!r.index.count(name)) out.emplace_back(name);
  }
  return out;
}

void reload() {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (size_t i = 0; i < table().size(); ++i) r.slots[i].cur.store(nullptr, std::memory_order_release);
}

std::optional<std::string> system_env(std::string_view name) {
  if (name.rfind("SYMMFLOW_", 0) == 0)
    throw std::logic_error(fmt::format("params: read {} through its declaration, not system_env()", name));
  std::string n(name);
  const char* v = env_raw(n.c_str());
  if (!v) return std::nullopt;
  return std::string(v);
}

size_t parse_bytes(const std::string& text, std::string_view what) {
  auto v = try_parse_bytes(text);
  SF_CHECK(v.has_value(), "{}: expected a size > 0 like 4096, 64K, 8M or 1G, found '{}'", what, text);
  return *v;
}

}  // namespace symmflow::params
