// sf_dist_suite: every collective and P2P form of symmflow::dist as one SPMD
// program, checked bit for bit against a reference each rank computes on its
// own, and summarised as a digest that must be the same for a world size
// whatever backend (shm under `symmflow launch`, mpi under mpirun) runs it.
//
//   symmflow launch --nproc 4 -- sf_dist_suite [--quick] [--only all_gather]
//   mpirun -n 4 sf_dist_suite                       (mpi backend)
//
// Inputs are a pure function of (case name, world rank of the contributor,
// element index). The reference folds contributions in group-rank order
// 0..W-1 with plain scalar code (not the runtime's reduce_kernel): acc = x0;
// acc = op(acc, x_j); bf16/f16 widen to f32, accumulate in f32 and round once;
// avg = sum / W (integers: truncating); max/min propagate NaN; integer
// sum/product wrap; bool sum/max = or, product/min = and.
//
// Output: one line `digest rank=R world=W <16 hex>` per rank (FNV-1a 64 of the
// case names and every result byte, in a fixed order: it depends on results
// only, never on timing, algorithm, pointers or backend) and `PASS <n> checks`
// on rank 0. The first mismatch prints case, rank, element, got/expected (and
// their bits) to stderr and exits 1.
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "symmflow/symmflow.h"

namespace sf = symmflow;
using sf::DType;
using sf::Shape;
using sf::Tensor;
using sf::dist::AllReduceAlgo;
using sf::dist::ProcessGroup;
using sf::dist::ReduceOp;

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// ---------------------------------------------------------------- options

struct Options {
  bool quick = false;
  double loop_seconds = 0;
  int die_rank = -1;
  double die_after = -1;
  std::string only;
};

const char* kUsage =
    "usage: sf_dist_suite [options]   (run by `symmflow launch --nproc N -- sf_dist_suite`\n"
    "                                  or by mpirun with the mpi backend)\n"
    "\n"
    "Runs every collective and P2P form over the world group and over subgroups\n"
    "(even ranks, {0, W-1}, all ranks in reverse order), checks every result bit\n"
    "for bit against a rank-order reference, prints `digest rank=R world=W <hex>`\n"
    "on every rank and `PASS <n> checks` on rank 0. Exit 0 on success, 1 on the\n"
    "first mismatch or error (details on stderr).\n"
    "\n"
    "options:\n"
    "  --quick             fewer and smaller cases (the digest differs from a full run)\n"
    "  --only PATTERN      run only the cases whose name contains PATTERN\n"
    "                      (names look like `world/all_reduce_/f32/sum/n=4099/two_shot/symm/hash`)\n"
    "  --loop-seconds S    after the battery, repeat a checked all_reduce over the world\n"
    "                      for S seconds (rank 0's clock decides, collectively); not in the digest\n"
    "  --die-rank R        with --die-after: rank R kills itself with SIGKILL during the loop\n"
    "  --die-after S       seconds after the loop started (the loop runs at least S + 60 s\n"
    "                      when --loop-seconds is smaller); the other ranks must fail with\n"
    "                      PeerFailure or be torn down by the launcher, never hang\n"
    "  -h, --help          this text\n";

[[noreturn]] void usage_error(const std::string& msg) {
  fmt::print(stderr, "sf_dist_suite: {}\n\n{}", msg, kUsage);
  std::exit(2);
}

double parse_double(const std::string& s, const char* what) {
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !(v >= 0)) usage_error(fmt::format("{}: expected a number >= 0, got '{}'", what, s));
  return v;
}

Options parse_args(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* name) -> std::string {
      if (i + 1 >= argc) usage_error(fmt::format("{} needs a value", name));
      return argv[++i];
    };
    if (a == "-h" || a == "--help") {
      fmt::print("{}", kUsage);
      std::exit(0);
    } else if (a == "--quick") {
      o.quick = true;
    } else if (a == "--only") {
      o.only = value("--only");
    } else if (a == "--loop-seconds") {
      o.loop_seconds = parse_double(value("--loop-seconds"), "--loop-seconds");
    } else if (a == "--die-rank") {
      o.die_rank = int(parse_double(value("--die-rank"), "--die-rank"));
    } else if (a == "--die-after") {
      o.die_after = parse_double(value("--die-after"), "--die-after");
    } else {
      usage_error(fmt::format("unknown argument '{}'", a));
    }
  }
  if ((o.die_rank >= 0) != (o.die_after >= 0)) usage_error("--die-rank and --die-after go together");
  if (o.die_rank >= 0 && o.loop_seconds < o.die_after + 60) o.loop_seconds = o.die_after + 60;
  return o;
}

// ---------------------------------------------------------------- digest, hashing

struct Fnv {
  uint64_t h = 0xcbf29ce484222325ull;
  void add(const void* p, size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) {
      h ^= b[i];
      h *= 0x100000001b3ull;
    }
  }
  void add(const std::string& s) {
    add(s.data(), s.size());
    unsigned char z = 0;
    add(&z, 1);
  }
};

uint64_t fnv_of(const std::string& s) {
  Fnv f;
  f.add(s);
  return f.h;
}

uint64_t mix64(uint64_t x) {  // splitmix64 finalizer
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
uint64_t hash3(uint64_t seed, int rank, int64_t i) {
  return mix64(seed ^ mix64(uint64_t(rank) * 0x100000001ull + 0x51ed27) ^ mix64(uint64_t(i) + 0x2545f491ull));
}

// ---------------------------------------------------------------- values

// exact: small quarter-integers (integers for int dtypes): sums are exact in f32.
// hash:  pseudo-random in [-1, 1) (full range for ints): summation order matters.
// nan:   hash with a quiet NaN now and then (floating only), for max/min.
enum class Mode { exact, hash, nan };
const char* mode_name(Mode m) { return m == Mode::exact ? "exact" : m == Mode::hash ? "hash" : "nan"; }

template <class T> constexpr bool kIsFloatLike =
    std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, sf::BFloat16> ||
    std::is_same_v<T, sf::Half>;

template <class T>
T from_double(double v) {
  if constexpr (std::is_same_v<T, double>) return v;
  else return T(float(v));  // f32, bf16 (RNE from f32), f16 (RNE from f32)
}

template <class T>
T gen(Mode m, uint64_t seed, int wrank, int64_t i) {
  const uint64_t h = hash3(seed, wrank, i);
  if constexpr (std::is_same_v<T, bool>) {
    if (m == Mode::exact) return (i + wrank + int64_t(seed % 3)) % 3 != 0;
    return h % 5 != 0;
  } else if constexpr (std::is_integral_v<T>) {
    if (m == Mode::exact) return T((i * 7 + wrank * 3 + int64_t(seed % 17)) % 17 - 8);
    return T(h);  // full range: sums and products wrap
  } else {
    if (m == Mode::exact) return from_double<T>(double((i * 7 + wrank * 3 + int64_t(seed % 17)) % 17 - 8) * 0.25);
    if (m == Mode::nan && (h >> 3) % 23 == 0) return from_double<T>(std::numeric_limits<double>::quiet_NaN());
    const double u = double(h >> 11) * 0x1.0p-53 * 2.0 - 1.0;
    return from_double<T>(u);
  }
}

// A value that is not what any op produces by accident (for "untouched" checks).
template <class T>
T sentinel(uint64_t seed, int wrank, int64_t i) {
  return gen<T>(Mode::hash, seed ^ 0x5e471e15e471e1ull, wrank + 1000, i);
}

// ---------------------------------------------------------------- reference fold

template <class A>
A fold_float(ReduceOp op, A acc, A x) {
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::avg: return acc + x;
    case ReduceOp::product: return acc * x;
    case ReduceOp::max:
      if (std::isnan(acc)) return acc;
      return (std::isnan(x) || x > acc) ? x : acc;
    case ReduceOp::min:
      if (std::isnan(acc)) return acc;
      return (std::isnan(x) || x < acc) ? x : acc;
  }
  return acc;
}

// get(j): the contribution of group rank j.
template <class T, class Get>
T ref_fold(ReduceOp op, int W, Get&& get) {
  if constexpr (std::is_same_v<T, bool>) {
    bool acc = get(0);
    for (int j = 1; j < W; ++j) {
      bool x = get(j);
      acc = (op == ReduceOp::sum || op == ReduceOp::max) ? (acc || x) : (acc && x);
    }
    return acc;
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    T acc = get(0);
    for (int j = 1; j < W; ++j) {
      T x = get(j);
      switch (op) {
        case ReduceOp::sum:
        case ReduceOp::avg: acc = T(U(acc) + U(x)); break;
        case ReduceOp::product: acc = T(U(acc) * U(x)); break;
        case ReduceOp::max: acc = x > acc ? x : acc; break;
        case ReduceOp::min: acc = x < acc ? x : acc; break;
      }
    }
    if (op == ReduceOp::avg) acc = T(acc / T(W));
    return acc;
  } else if constexpr (std::is_same_v<T, double>) {
    double acc = get(0);
    for (int j = 1; j < W; ++j) acc = fold_float<double>(op, acc, get(j));
    if (op == ReduceOp::avg) acc = acc / double(W);
    return acc;
  } else {  // f32, bf16, f16: in f32, one rounding at the end
    float acc = float(get(0));
    for (int j = 1; j < W; ++j) acc = fold_float<float>(op, acc, float(get(j)));
    if (op == ReduceOp::avg) acc = acc / float(W);
    return T(acc);
  }
}

// ---------------------------------------------------------------- tensor access

// Visits a tensor's elements in row-major (logical) order: f(linear index, element address).
template <class F>
void for_each_elem(const Tensor& t, F&& f) {
  const int64_t n = t.numel(), nd = t.dim();
  if (n == 0) return;
  char* base = static_cast<char*>(t.data_ptr());
  const int64_t isz = int64_t(t.itemsize());
  if (t.is_contiguous()) {
    for (int64_t k = 0; k < n; ++k) f(k, base + k * isz);
    return;
  }
  std::vector<int64_t> idx(size_t(nd), 0);
  int64_t off = 0;
  for (int64_t k = 0; k < n; ++k) {
    f(k, base + off * isz);
    for (int64_t d = nd - 1; d >= 0; --d) {
      off += t.strides()[size_t(d)];
      if (++idx[size_t(d)] < t.sizes()[size_t(d)]) break;
      off -= idx[size_t(d)] * t.strides()[size_t(d)];
      idx[size_t(d)] = 0;
    }
  }
}

template <class T>
void fill_fn(const Tensor& t, const std::function<T(int64_t)>& v) {
  for_each_elem(t, [&](int64_t i, char* p) {
    T x = v(i);
    std::memcpy(p, &x, sizeof(T));
  });
}

template <class T>
std::string show(const T& x) {
  if constexpr (std::is_same_v<T, sf::BFloat16> || std::is_same_v<T, sf::Half>)
    return fmt::format("{} (bits 0x{:04x})", float(x), x.bits);
  else if constexpr (std::is_same_v<T, float>) {
    uint32_t b;
    std::memcpy(&b, &x, 4);
    return fmt::format("{} (bits 0x{:08x})", x, b);
  } else if constexpr (std::is_same_v<T, double>) {
    uint64_t b;
    std::memcpy(&b, &x, 8);
    return fmt::format("{} (bits 0x{:016x})", x, b);
  } else if constexpr (std::is_same_v<T, bool>) {
    return fmt::format("{}", x);
  } else {
    return fmt::format("{} (bits 0x{:x})", x, std::make_unsigned_t<T>(x));
  }
}

// ---------------------------------------------------------------- buffers

// Where a test tensor lives: symmetric memory of the group, regular memory, or
// a strided view (every 2nd element) of a symmetric or regular buffer.
enum class Mem { symm, reg, symm_view, reg_view };
const char* mem_name(Mem m) {
  switch (m) {
    case Mem::symm: return "symm";
    case Mem::reg: return "reg";
    case Mem::symm_view: return "symmview";
    case Mem::reg_view: return "regview";
  }
  return "?";
}

struct Buf {
  Tensor base;  // the allocation
  Tensor t;     // the tensor under test (== base unless a view)
};

// ---------------------------------------------------------------- the suite

struct Group {
  std::string name;
  ProcessGroup* g = nullptr;  // nullptr: this rank is not a member
  bool full = true;           // run the whole battery (else a reduced one)
};

class Suite {
 public:
  Suite(const Options& o) : opt_(o), me_(sf::dist::world().rank()), W_(sf::dist::world().size()) {}

  const Options& opt_;
  int me_, W_;
  Fnv digest_;
  uint64_t checks_ = 0;
  std::string case_;  // current case name
  ProcessGroup* g_ = nullptr;
  std::string gname_;

  int gW() const { return g_->size(); }
  int gme() const { return g_->rank(); }
  int wr(int grank) const { return g_->world_rank(grank); }

  // Starts a case: false when --only filters it out. Names go into the digest.
  bool begin(const std::string& name) {
    case_ = gname_ + "/" + name;
    if (!opt_.only.empty() && case_.find(opt_.only) == std::string::npos) return false;
    digest_.add(case_);
    return true;
  }
  uint64_t seed() const { return fnv_of(case_); }

  [[noreturn]] void mismatch(const std::string& what, int64_t i, const std::string& got,
                             const std::string& want) {
    fmt::print(stderr,
               "MISMATCH case '{}' ({}) group '{}' rank {} (world rank {}), world {}: element {}: got "
               "{}, expected {}\n",
               case_, what, gname_, g_ ? g_->rank() : -1, me_, W_, i, got, want);
    std::fflush(stderr);
    std::fflush(stdout);
    std::exit(1);
  }

  // Compares every element of t with want(i), bitwise; adds the bytes to the digest.
  template <class T>
  void check(const Tensor& t, const std::function<T(int64_t)>& want, const std::string& what) {
    SF_CHECK(t.dtype() == sf::DTypeOf<T>::value, "suite: check<{}> on {}", sf::dtype_name(sf::DTypeOf<T>::value),
             t.type_string());
    for_each_elem(t, [&](int64_t i, char* p) {
      T w = want(i);
      if (std::memcmp(p, &w, sizeof(T)) != 0) {
        T got;
        std::memcpy(&got, p, sizeof(T));
        mismatch(what, i, show(got), show(w));
      }
      digest_.add(p, sizeof(T));
    });
    ++checks_;
  }

  Buf make(Shape shape, DType dt, Mem m) {
    Buf b;
    if (m == Mem::symm) {
      b.base = sf::symm::empty(shape, dt, *g_);
    } else if (m == Mem::reg) {
      b.base = Tensor::empty_with(sf::regular_allocator(), shape, dt);
    } else {
      SF_CHECK(shape.size() == 1, "suite: views are 1-D");
      const int64_t n = shape[0];
      Shape s2 = {2 * n + 1};
      b.base = m == Mem::symm_view ? sf::symm::empty(s2, dt, *g_)
                                   : Tensor::empty_with(sf::regular_allocator(), s2, dt);
      b.t = b.base.as_strided({n}, {2}, 1);
      return b;
    }
    b.t = b.base;
    return b;
  }
  static bool is_view(Mem m) { return m == Mem::symm_view || m == Mem::reg_view; }

  // Fills a view's base with sentinels (the view's own elements are filled after).
  template <class T>
  void prefill(const Buf& b, uint64_t salt) {
    const uint64_t s = seed() ^ salt;
    fill_fn<T>(b.base, [&](int64_t i) { return sentinel<T>(s, me_, i); });
  }
  // The base's elements outside the view still hold their sentinels.
  template <class T>
  void check_outside(const Buf& b, uint64_t salt, const std::string& what) {
    if (b.base.is_same(b.t)) return;
    const uint64_t s = seed() ^ salt;
    // A view with stride 2 at offset 1: even elements of the base are outside.
    Tensor even = b.base.as_strided({(b.base.numel() + 1) / 2}, {2}, 0);
    check<T>(even, [&](int64_t k) { return sentinel<T>(s, me_, 2 * k); }, what + " (outside the view)");
  }

  // ------------------------------------------------------------ all_reduce
  template <class T>
  void all_reduce_case(DType dt, ReduceOp op, int64_t n, AllReduceAlgo algo, bool inplace, Mem in_mem,
                       Mem out_mem, Mode mode) {
    std::string name = fmt::format("{}/{}/{}/n={}/{}/{}", inplace ? "all_reduce_" : "all_reduce",
                                   sf::dtype_name(dt), sf::dist::reduce_op_name(op), n,
                                   sf::dist::algo_name(algo), mem_name(in_mem));
    if (!inplace) name += fmt::format("->{}", mem_name(out_mem));
    name += fmt::format("/{}", mode_name(mode));
    if (!begin(name)) return;
    const uint64_t s = seed();
    const int W = gW();
    Buf in = make({n}, dt, in_mem);
    prefill<T>(in, 1);
    fill_fn<T>(in.t, [&](int64_t i) { return gen<T>(mode, s, me_, i); });
    Buf out;
    if (!inplace) {
      out = make({n}, dt, out_mem);
      prefill<T>(out, 2);
      fill_fn<T>(out.t, [&](int64_t i) { return sentinel<T>(s ^ 3, me_, i); });
    }
    std::function<T(int64_t)> want = [&](int64_t i) {
      return ref_fold<T>(op, W, [&](int j) { return gen<T>(mode, s, wr(j), i); });
    };
    if (inplace) {
      sf::dist::all_reduce_(*g_, in.t, op, algo);
      check<T>(in.t, want, "result");
    } else {
      sf::dist::all_reduce(*g_, out.t, in.t, op, algo);
      check<T>(out.t, want, "result");
      check<T>(in.t, [&](int64_t i) { return gen<T>(mode, s, me_, i); }, "input unchanged");
      check_outside<T>(out, 2, "out");
    }
    check_outside<T>(in, 1, "in");
  }

  template <class T>
  void all_reduce_matrix(DType dt, ReduceOp op, const std::vector<int64_t>& sizes) {
    const bool q = opt_.quick;
    const bool fl = kIsFloatLike<T>;
    for (int64_t n : sizes) {
      for (AllReduceAlgo algo : {AllReduceAlgo::automatic, AllReduceAlgo::one_shot, AllReduceAlgo::two_shot}) {
        std::vector<Mode> modes = {Mode::hash};
        if (n == 256 || std::is_same_v<T, bool>) modes = {Mode::exact, Mode::hash};
        if (fl && (op == ReduceOp::max || op == ReduceOp::min) && n >= 256) modes = {Mode::nan};
        for (Mode mode : modes) {
          all_reduce_case<T>(dt, op, n, algo, true, Mem::symm, Mem::symm, mode);
          all_reduce_case<T>(dt, op, n, algo, true, Mem::reg, Mem::reg, mode);
          all_reduce_case<T>(dt, op, n, algo, false, Mem::symm, Mem::symm, mode);
          all_reduce_case<T>(dt, op, n, algo, false, Mem::symm, Mem::reg, mode);
          if (!q) all_reduce_case<T>(dt, op, n, algo, false, Mem::reg, Mem::symm, mode);
          all_reduce_case<T>(dt, op, n, algo, false, Mem::reg, Mem::reg, mode);
        }
      }
    }
  }

  void all_reduce_suite(bool full) {
    const bool q = opt_.quick || !full;
    const int64_t odd = 4099;  // prime: not divisible by any W > 1 (W < 4099)
    std::vector<int64_t> sizes = q ? std::vector<int64_t>{3, 256, odd} : std::vector<int64_t>{1, 3, 256, 1000, odd};
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::avg, ReduceOp::max, ReduceOp::min, ReduceOp::product}) {
      all_reduce_matrix<float>(DType::f32, op, sizes);
      all_reduce_matrix<sf::BFloat16>(DType::bf16, op, sizes);
      all_reduce_matrix<int64_t>(DType::i64, op, sizes);
    }
    std::vector<int64_t> few = {3, odd};
    all_reduce_matrix<sf::Half>(DType::f16, ReduceOp::sum, few);
    all_reduce_matrix<double>(DType::f64, ReduceOp::sum, few);
    if (!q) {
      all_reduce_matrix<sf::Half>(DType::f16, ReduceOp::avg, few);
      all_reduce_matrix<sf::Half>(DType::f16, ReduceOp::max, few);
      all_reduce_matrix<double>(DType::f64, ReduceOp::product, few);
      all_reduce_matrix<double>(DType::f64, ReduceOp::avg, few);
      all_reduce_matrix<int32_t>(DType::i32, ReduceOp::sum, few);
      all_reduce_matrix<int32_t>(DType::i32, ReduceOp::min, few);
    }
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::max, ReduceOp::product, ReduceOp::min})
      all_reduce_matrix<bool>(DType::boolean, op, few);

    // Strided views (every second element of a larger buffer), in and out.
    for (AllReduceAlgo algo : {AllReduceAlgo::automatic, AllReduceAlgo::one_shot, AllReduceAlgo::two_shot}) {
      for (int64_t n : {int64_t(3), odd}) {
        for (Mem m : {Mem::symm_view, Mem::reg_view}) {
          all_reduce_case<float>(DType::f32, ReduceOp::sum, n, algo, true, m, m, Mode::hash);
          all_reduce_case<sf::BFloat16>(DType::bf16, ReduceOp::max, n, algo, true, m, m, Mode::nan);
          all_reduce_case<float>(DType::f32, ReduceOp::sum, n, algo, false, m, Mem::symm, Mode::hash);
          all_reduce_case<int64_t>(DType::i64, ReduceOp::sum, n, algo, false, Mem::symm, m, Mode::hash);
          all_reduce_case<float>(DType::f32, ReduceOp::avg, n, algo, false, m, Mem::reg_view, Mode::hash);
        }
      }
    }

    // Large: ~2 MiB (1 MiB in quick mode).
    const int64_t big = (q ? 1 : 2) << 20;
    for (AllReduceAlgo algo : {AllReduceAlgo::automatic, AllReduceAlgo::one_shot, AllReduceAlgo::two_shot}) {
      all_reduce_case<float>(DType::f32, ReduceOp::sum, big / 4 + 1, algo, true, Mem::symm, Mem::symm, Mode::hash);
      if (!q) {
        all_reduce_case<float>(DType::f32, ReduceOp::sum, big / 4, algo, false, Mem::symm, Mem::reg, Mode::hash);
        all_reduce_case<float>(DType::f32, ReduceOp::avg, big / 4, algo, true, Mem::reg, Mem::reg, Mode::hash);
      }
    }
    all_reduce_case<sf::BFloat16>(DType::bf16, ReduceOp::sum, big / 2, AllReduceAlgo::two_shot, true, Mem::symm,
                                  Mem::symm, Mode::hash);
    all_reduce_case<int64_t>(DType::i64, ReduceOp::sum, big / 8, AllReduceAlgo::automatic, false, Mem::reg,
                             Mem::symm, Mode::hash);
    if (!q) {
      all_reduce_case<sf::BFloat16>(DType::bf16, ReduceOp::max, big / 2, AllReduceAlgo::one_shot, false, Mem::symm,
                                    Mem::symm, Mode::nan);
      all_reduce_case<float>(DType::f32, ReduceOp::product, big / 4, AllReduceAlgo::two_shot, true,
                             Mem::symm_view, Mem::symm_view, Mode::hash);
    }
  }

  // ------------------------------------------------------------ all_gather
  template <class T>
  void all_gather_case(DType dt, int64_t n, Mem in_mem, Mem out_mem, bool in_place) {
    std::string name = in_place ? fmt::format("all_gather/{}/n={}/inplace-{}", sf::dtype_name(dt), n, mem_name(out_mem))
                                : fmt::format("all_gather/{}/n={}/{}->{}", sf::dtype_name(dt), n, mem_name(in_mem),
                                              mem_name(out_mem));
    if (!begin(name)) return;
    const uint64_t s = seed();
    const int W = gW(), me = gme();
    Buf out = make({W * n}, dt, out_mem);
    prefill<T>(out, 2);
    fill_fn<T>(out.t, [&](int64_t i) { return sentinel<T>(s ^ 3, me_, i); });
    Buf in;
    if (in_place) {
      in.base = in.t = out.t.as_strided({n}, {1}, me * n);
    } else {
      in = make({n}, dt, in_mem);
      prefill<T>(in, 1);
    }
    fill_fn<T>(in.t, [&](int64_t i) { return gen<T>(Mode::hash, s, me_, i); });
    sf::dist::all_gather(*g_, out.t, in.t);
    check<T>(out.t, [&](int64_t k) { return gen<T>(Mode::hash, s, wr(int(k / n)), k % n); }, "result");
    check_outside<T>(out, 2, "out");
    if (!in_place) {
      check<T>(in.t, [&](int64_t i) { return gen<T>(Mode::hash, s, me_, i); }, "input unchanged");
      check_outside<T>(in, 1, "in");
    }
  }

  void all_gather_suite(bool full) {
    const bool q = opt_.quick || !full;
    std::vector<int64_t> sizes = q ? std::vector<int64_t>{3, 4099} : std::vector<int64_t>{1, 3, 256, 1000, 4099};
    for (int64_t n : sizes) {
      for (Mem i : {Mem::symm, Mem::reg, Mem::symm_view})
        for (Mem o : {Mem::symm, Mem::reg, Mem::reg_view}) {
          if (q && o == Mem::reg_view) continue;
          all_gather_case<float>(DType::f32, n, i, o, false);
        }
      all_gather_case<float>(DType::f32, n, Mem::symm, Mem::symm, true);
      all_gather_case<float>(DType::f32, n, Mem::symm, Mem::reg, true);
      all_gather_case<sf::BFloat16>(DType::bf16, n, Mem::symm, Mem::reg, false);
      all_gather_case<int64_t>(DType::i64, n, Mem::reg, Mem::symm, false);
    }
    const int64_t big = ((q ? 1 : 2) << 20) / 4 / gW();  // output ~1-2 MiB
    all_gather_case<float>(DType::f32, big, Mem::symm, Mem::symm, false);
    all_gather_case<float>(DType::f32, big, Mem::reg, Mem::reg, false);
    all_gather_case<float>(DType::f32, big, Mem::symm, Mem::symm, true);
  }

  // ------------------------------------------------------------ reduce_scatter
  template <class T>
  void reduce_scatter_case(DType dt, ReduceOp op, int64_t m, Mem in_mem, Mem out_mem, Mode mode) {
    if (!begin(fmt::format("reduce_scatter/{}/{}/m={}/{}->{}/{}", sf::dtype_name(dt), sf::dist::reduce_op_name(op),
                           m, mem_name(in_mem), mem_name(out_mem), mode_name(mode))))
      return;
    const uint64_t s = seed();
    const int W = gW(), me = gme();
    Buf in = make({W * m}, dt, in_mem);
    prefill<T>(in, 1);
    fill_fn<T>(in.t, [&](int64_t i) { return gen<T>(mode, s, me_, i); });
    Buf out = make({m}, dt, out_mem);
    prefill<T>(out, 2);
    fill_fn<T>(out.t, [&](int64_t i) { return sentinel<T>(s ^ 3, me_, i); });
    sf::dist::reduce_scatter(*g_, out.t, in.t, op);
    check<T>(out.t, [&](int64_t i) {
      return ref_fold<T>(op, W, [&](int j) { return gen<T>(mode, s, wr(j), me * m + i); });
    }, "result");
    check<T>(in.t, [&](int64_t i) { return gen<T>(mode, s, me_, i); }, "input unchanged");
    check_outside<T>(in, 1, "in");
    check_outside<T>(out, 2, "out");
  }

  void reduce_scatter_suite(bool full) {
    const bool q = opt_.quick || !full;
    std::vector<int64_t> sizes = q ? std::vector<int64_t>{3, 1000} : std::vector<int64_t>{1, 3, 256, 1000};
    for (int64_t m : sizes) {
      for (ReduceOp op : {ReduceOp::sum, ReduceOp::avg, ReduceOp::max, ReduceOp::min, ReduceOp::product}) {
        Mode fm = (op == ReduceOp::max || op == ReduceOp::min) ? Mode::nan : Mode::hash;
        reduce_scatter_case<float>(DType::f32, op, m, Mem::symm, Mem::symm, fm);
        reduce_scatter_case<float>(DType::f32, op, m, Mem::reg, Mem::reg, fm);
        reduce_scatter_case<sf::BFloat16>(DType::bf16, op, m, Mem::symm, Mem::reg, fm);
        reduce_scatter_case<int64_t>(DType::i64, op, m, Mem::reg, Mem::symm, Mode::hash);
      }
      reduce_scatter_case<float>(DType::f32, ReduceOp::sum, m, Mem::symm_view, Mem::reg_view, Mode::hash);
      reduce_scatter_case<float>(DType::f32, ReduceOp::sum, m, Mem::reg_view, Mem::symm, Mode::exact);
      reduce_scatter_case<sf::Half>(DType::f16, ReduceOp::sum, m, Mem::symm, Mem::symm, Mode::hash);
      reduce_scatter_case<double>(DType::f64, ReduceOp::sum, m, Mem::symm, Mem::reg, Mode::hash);
      reduce_scatter_case<bool>(DType::boolean, ReduceOp::max, m, Mem::symm, Mem::reg, Mode::hash);
      reduce_scatter_case<bool>(DType::boolean, ReduceOp::product, m, Mem::reg, Mem::symm, Mode::hash);
    }
    const int64_t big = ((q ? 1 : 2) << 20) / 4 / gW();  // input ~1-2 MiB
    reduce_scatter_case<float>(DType::f32, ReduceOp::sum, big, Mem::symm, Mem::symm, Mode::hash);
    reduce_scatter_case<float>(DType::f32, ReduceOp::sum, big, Mem::reg, Mem::reg, Mode::hash);
    reduce_scatter_case<sf::BFloat16>(DType::bf16, ReduceOp::avg, 2 * big, Mem::symm, Mem::reg, Mode::hash);
  }

  // ------------------------------------------------------------ all_to_all_single
  template <class T>
  void all_to_all_case(DType dt, int64_t cols, int64_t per, bool uneven, Mem in_mem, Mem out_mem, bool strided_in) {
    if (!begin(fmt::format("all_to_all_single/{}/cols={}/{}{}/{}{}->{}", sf::dtype_name(dt), cols,
                           uneven ? "uneven" : "equal", uneven ? std::string() : fmt::format("={}", per), mem_name(in_mem),
                           strided_in ? "-strided" : "", mem_name(out_mem))))
      return;
    const uint64_t s = seed();
    const int W = gW(), me = gme();
    // split(src, dst): rows group rank src sends to dst (some are zero when uneven).
    auto split = [&](int src, int dst) -> int64_t {
      if (!uneven) return per;
      return int64_t((src + 2 * dst + int(s % 5)) % 4) * (1 + (src + dst) % 3);
    };
    std::vector<int64_t> in_splits, out_splits;
    int64_t in_rows = 0, out_rows = 0;
    for (int j = 0; j < W; ++j) {
      in_splits.push_back(split(me, j));
      out_splits.push_back(split(j, me));
      in_rows += in_splits.back();
      out_rows += out_splits.back();
    }
    // Symmetric allocations must have the same size on every rank: allocate the
    // largest row count of any rank and use the leading rows (still contiguous).
    int64_t max_in = 0, max_out = 0;
    for (int p = 0; p < W; ++p) {
      int64_t a = 0, b = 0;
      for (int j = 0; j < W; ++j) {
        a += split(p, j);
        b += split(j, p);
      }
      max_in = std::max(max_in, a);
      max_out = std::max(max_out, b);
    }
    Buf in;
    if (strided_in) {  // rows with a pitch of cols + 2 elements
      in.base = in_mem == Mem::symm ? sf::symm::empty({max_in * (cols + 2) + 1}, dt, *g_)
                                    : Tensor::empty_with(sf::regular_allocator(), {max_in * (cols + 2) + 1}, dt);
      in.t = in.base.as_strided({in_rows, cols}, {cols + 2, 1}, 1);
    } else {
      in = make({max_in, cols}, dt, in_mem);
      in.t = in.base.as_strided({in_rows, cols}, {cols, 1}, 0);
    }
    fill_fn<T>(in.base, [&](int64_t i) { return sentinel<T>(s ^ 1, me_, i); });
    fill_fn<T>(in.t, [&](int64_t i) { return gen<T>(Mode::hash, s, me_, i); });
    Buf out = make({max_out, cols}, dt, out_mem);
    fill_fn<T>(out.base, [&](int64_t i) { return sentinel<T>(s ^ 5, me_, i); });
    out.t = out.base.as_strided({out_rows, cols}, {cols, 1}, 0);
    fill_fn<T>(out.t, [&](int64_t i) { return sentinel<T>(s ^ 3, me_, i); });
    const bool empty_splits = !uneven && (s % 2 == 0);  // equal splits: sometimes as {} (means equal)
    if (empty_splits) sf::dist::all_to_all_single(*g_, out.t, in.t, {}, {});
    else sf::dist::all_to_all_single(*g_, out.t, in.t, out_splits, in_splits);
    // Expected: for each source p in order, its rows destined to me.
    std::vector<std::pair<int, int64_t>> row_src;  // (source group rank, its row index)
    for (int p = 0; p < W; ++p) {
      int64_t from = 0;
      for (int j = 0; j < me; ++j) from += split(p, j);
      for (int64_t k = 0; k < split(p, me); ++k) row_src.push_back({p, from + k});
    }
    check<T>(out.t, [&](int64_t i) {
      auto [p, row] = row_src[size_t(i / cols)];
      return gen<T>(Mode::hash, s, wr(p), row * cols + i % cols);
    }, "result");
    check<T>(in.t, [&](int64_t i) { return gen<T>(Mode::hash, s, me_, i); }, "input unchanged");
    // Rows of `out`'s allocation beyond out_rows are untouched.
    Tensor tail = out.base.as_strided({(max_out - out_rows) * cols}, {1}, out_rows * cols);
    check<T>(tail, [&](int64_t i) { return sentinel<T>(s ^ 5, me_, out_rows * cols + i); }, "out beyond its rows");
  }

  void all_to_all_suite(bool full) {
    const bool q = opt_.quick || !full;
    for (Mem i : {Mem::symm, Mem::reg})
      for (Mem o : {Mem::symm, Mem::reg}) {
        all_to_all_case<float>(DType::f32, 5, 1, false, i, o, false);
        all_to_all_case<float>(DType::f32, 5, 3, false, i, o, false);
        all_to_all_case<float>(DType::f32, 7, 0, true, i, o, false);
        if (!q) all_to_all_case<int64_t>(DType::i64, 3, 40, false, i, o, false);
        all_to_all_case<sf::BFloat16>(DType::bf16, 9, 0, true, i, o, false);
      }
    all_to_all_case<float>(DType::f32, 6, 2, false, Mem::symm, Mem::reg, true);
    all_to_all_case<float>(DType::f32, 6, 0, true, Mem::reg, Mem::symm, true);
    // Large: rows of 256 f32, ~1 MiB per rank in total.
    const int64_t per = ((q ? 512 : 1024) / gW());
    all_to_all_case<float>(DType::f32, 256, per, false, Mem::symm, Mem::symm, false);
    if (!q) all_to_all_case<float>(DType::f32, 256, per, false, Mem::reg, Mem::reg, false);
  }

  // ------------------------------------------------------------ broadcast_
  template <class T>
  void broadcast_case(DType dt, int64_t n, int root, Mem mem) {
    if (!begin(fmt::format("broadcast_/{}/n={}/root={}/{}", sf::dtype_name(dt), n, root, mem_name(mem)))) return;
    const uint64_t s = seed();
    Buf b = make({n}, dt, mem);
    prefill<T>(b, 1);
    if (gme() == root) fill_fn<T>(b.t, [&](int64_t i) { return gen<T>(Mode::hash, s, me_, i); });
    else fill_fn<T>(b.t, [&](int64_t i) { return sentinel<T>(s ^ 3, me_, i); });
    sf::dist::broadcast_(*g_, b.t, root);
    check<T>(b.t, [&](int64_t i) { return gen<T>(Mode::hash, s, wr(root), i); }, "result");
    check_outside<T>(b, 1, "t");
  }

  void broadcast_suite(bool full) {
    const bool q = opt_.quick || !full;
    const int W = gW();
    for (int root = 0; root < W; ++root) {
      for (Mem m : {Mem::symm, Mem::reg, Mem::symm_view, Mem::reg_view}) {
        broadcast_case<float>(DType::f32, 3, root, m);
        broadcast_case<float>(DType::f32, 4099, root, m);
      }
      broadcast_case<float>(DType::f32, 1, root, Mem::symm);
      if (!q) {
        broadcast_case<sf::BFloat16>(DType::bf16, 4099, root, Mem::reg);
        broadcast_case<int64_t>(DType::i64, 1000, root, Mem::symm);
        broadcast_case<bool>(DType::boolean, 77, root, Mem::reg);
      }
    }
    const int64_t big = ((q ? 1 : 2) << 20) / 4;
    broadcast_case<float>(DType::f32, big, 0, Mem::symm);
    broadcast_case<float>(DType::f32, big, W - 1, Mem::reg);
  }

  // ------------------------------------------------------------ tile_reduce
  // Matrices A (input) and B (output) of rows x cols per rank; the in tile is
  // A[r0:r0+h, c0:c0+w] (or its transpose when `transposed`), the out tile is
  // B at another position with the same sizes; B elsewhere must stay untouched.
  template <class T>
  void tile_reduce_case(DType dt, ReduceOp op, int64_t rows, int64_t cols, int64_t h, int64_t w, int root, Mem a_mem,
                        Mem b_mem, bool transposed, Mode mode) {
    if (!begin(fmt::format("tile_reduce/{}/{}/{}x{}-of-{}x{}{}/root={}/{}->{}/{}", sf::dtype_name(dt),
                           sf::dist::reduce_op_name(op), h, w, rows, cols, transposed ? "-T" : "", root,
                           mem_name(a_mem), mem_name(b_mem), mode_name(mode))))
      return;
    const uint64_t s = seed();
    const int W = gW();
    Buf A = make({rows, cols}, dt, a_mem), B = make({rows, cols}, dt, b_mem);
    fill_fn<T>(A.t, [&](int64_t i) { return gen<T>(mode, s, me_, i); });
    fill_fn<T>(B.t, [&](int64_t i) { return sentinel<T>(s ^ 3, me_, i); });
    const int64_t r0 = 1 + int64_t(s % 3), c0 = 2 + int64_t((s >> 8) % 3);
    const int64_t o_r = rows - h - int64_t((s >> 16) % 2), o_c = cols - w - int64_t((s >> 24) % 2);
    Tensor in_tile, out_tile;
    // Element k of a tile in logical order -> flat index in its matrix.
    std::function<int64_t(int64_t)> in_flat, out_flat;
    if (!transposed) {
      in_tile = A.t.as_strided({h, w}, {cols, 1}, r0 * cols + c0);
      out_tile = B.t.as_strided({h, w}, {cols, 1}, o_r * cols + o_c);
      in_flat = [=](int64_t k) { return (r0 + k / w) * cols + c0 + k % w; };
      out_flat = [=](int64_t k) { return (o_r + k / w) * cols + o_c + k % w; };
    } else {  // the tile is a [w, h] view whose rows are columns of the matrix
      in_tile = A.t.as_strided({w, h}, {1, cols}, r0 * cols + c0);
      out_tile = B.t.as_strided({w, h}, {1, cols}, o_r * cols + o_c);
      in_flat = [=](int64_t k) { return (r0 + k % h) * cols + c0 + k / h; };
      out_flat = [=](int64_t k) { return (o_r + k % h) * cols + o_c + k / h; };
    }
    sf::dist::tile_reduce(*g_, in_tile, out_tile, root, op);
    if (gme() == root)
      check<T>(out_tile, [&](int64_t k) {
        return ref_fold<T>(op, W, [&](int j) { return gen<T>(mode, s, wr(j), in_flat(k)); });
      }, "result");
    // B outside the tile (all of B on non-roots) untouched; A unchanged.
    std::vector<char> in_tile_mask(size_t(rows * cols), 0);
    if (gme() == root)
      for (int64_t k = 0; k < h * w; ++k) in_tile_mask[size_t(out_flat(k))] = 1;
    Tensor B_flat = B.t.as_strided({rows * cols}, {1}, 0);
    for_each_elem(B_flat, [&](int64_t i, char* p) {
      if (in_tile_mask[size_t(i)]) return;
      T want = sentinel<T>(s ^ 3, me_, i);
      if (std::memcmp(p, &want, sizeof(T)) != 0) {
        T got;
        std::memcpy(&got, p, sizeof(T));
        mismatch("out matrix outside the tile (must be untouched)", i, show(got), show(want));
      }
    });
    check<T>(A.t, [&](int64_t i) { return gen<T>(mode, s, me_, i); }, "input matrix unchanged");
  }

  void tile_reduce_suite(bool full) {
    const bool q = opt_.quick || !full;
    const int W = gW();
    for (int root = 0; root < W; ++root) {
      for (Mem a : {Mem::symm, Mem::reg})
        for (Mem b : {Mem::symm, Mem::reg}) {
          tile_reduce_case<float>(DType::f32, ReduceOp::sum, 12, 20, 3, 5, root, a, b, false, Mode::hash);
          tile_reduce_case<float>(DType::f32, ReduceOp::sum, 80, 90, 40, 70, root, a, b, false, Mode::hash);
        }
      tile_reduce_case<float>(DType::f32, ReduceOp::max, 80, 90, 40, 70, root, Mem::symm, Mem::reg, false, Mode::nan);
      // One row: a contiguous tile, which goes through without being packed.
      tile_reduce_case<float>(DType::f32, ReduceOp::sum, 12, 20, 1, 9, root, Mem::symm, Mem::reg, false, Mode::hash);
      tile_reduce_case<float>(DType::f32, ReduceOp::sum, 12, 20, 3, 5, root, Mem::symm, Mem::symm, true, Mode::hash);
      tile_reduce_case<float>(DType::f32, ReduceOp::min, 80, 90, 40, 70, root, Mem::reg, Mem::symm, true, Mode::nan);
      tile_reduce_case<sf::BFloat16>(DType::bf16, ReduceOp::avg, 30, 40, 7, 9, root, Mem::symm, Mem::symm, false,
                                     Mode::hash);
      if (!q) {
        tile_reduce_case<sf::BFloat16>(DType::bf16, ReduceOp::sum, 80, 90, 40, 70, root, Mem::reg, Mem::reg, false,
                                       Mode::hash);
        tile_reduce_case<int64_t>(DType::i64, ReduceOp::product, 30, 40, 7, 9, root, Mem::symm, Mem::reg, false,
                                  Mode::hash);
        tile_reduce_case<float>(DType::f32, ReduceOp::product, 30, 40, 7, 9, root, Mem::symm, Mem::symm, false,
                                Mode::hash);
      }
    }
    // ~1 MiB tile of a 1.5 MiB matrix.
    tile_reduce_case<float>(DType::f32, ReduceOp::sum, 400, 1000, 300, 900, 0, Mem::symm, Mem::symm, false, Mode::hash);
    if (!q)
      tile_reduce_case<float>(DType::f32, ReduceOp::sum, 400, 1000, 300, 900, W - 1, Mem::reg, Mem::reg, false,
                              Mode::hash);
  }

  // ------------------------------------------------------------ P2P
  // A message: (case seed, sender's world rank, message id) determines its contents.
  template <class T>
  T msg_val(uint64_t s, int sender_wr, int msg, int64_t i) {
    return gen<T>(Mode::hash, s ^ (uint64_t(msg) * 0x9e3779b97f4a7c15ull), sender_wr, i);
  }

  // Ring: send to rank+1, receive from rank-1, with three posting/waiting orders.
  void p2p_ring_case(int64_t n, Mem smem, Mem rmem, int order) {
    if (!begin(fmt::format("p2p/ring/n={}/{}->{}/order{}", n, mem_name(smem), mem_name(rmem), order))) return;
    const uint64_t s = seed();
    const int W = gW(), me = gme(), next = (me + 1) % W, prev = (me + W - 1) % W;
    Buf x = make({n}, DType::f32, smem), y = make({n}, DType::f32, rmem);
    prefill<float>(x, 1);
    prefill<float>(y, 2);
    fill_fn<float>(x.t, [&](int64_t i) { return msg_val<float>(s, me_, 0, i); });
    fill_fn<float>(y.t, [&](int64_t i) { return sentinel<float>(s ^ 3, me_, i); });
    if (order == 0) {
      auto ws = sf::dist::isend(*g_, x.t, next, 3);
      auto wr_ = sf::dist::irecv(*g_, y.t, prev, 3);
      ws.wait();
      wr_.wait();
    } else if (order == 1) {
      auto wr_ = sf::dist::irecv(*g_, y.t, prev, 3);
      auto ws = sf::dist::isend(*g_, x.t, next, 3);
      wr_.wait();
      if (!ws.is_completed()) ws.wait();
    } else {
      auto w = sf::dist::batch_isend_irecv(*g_, {sf::dist::P2POp::send(x.t, next, 3),
                                                 sf::dist::P2POp::recv(y.t, prev, 3)});
      for (auto& k : w) k.wait();
    }
    check<float>(y.t, [&](int64_t i) { return msg_val<float>(s, wr(prev), 0, i); }, "received");
    check<float>(x.t, [&](int64_t i) { return msg_val<float>(s, me_, 0, i); }, "send buffer unchanged");
    check_outside<float>(x, 1, "send");
    check_outside<float>(y, 2, "recv");
  }

  // Pairwise exchange with rank^1 (a rank without partner exchanges with itself).
  void p2p_pair_case(int64_t n, Mem smem, Mem rmem) {
    if (!begin(fmt::format("p2p/pairwise/n={}/{}->{}", n, mem_name(smem), mem_name(rmem)))) return;
    const uint64_t s = seed();
    const int W = gW(), me = gme();
    const int partner = (me ^ 1) < W ? (me ^ 1) : me;
    Buf x = make({n}, DType::i64, smem), y = make({n}, DType::i64, rmem);
    fill_fn<int64_t>(x.t, [&](int64_t i) { return msg_val<int64_t>(s, me_, 1, i); });
    fill_fn<int64_t>(y.t, [&](int64_t i) { return sentinel<int64_t>(s, me_, i); });
    auto a = sf::dist::irecv(*g_, y.t, partner, 7);
    auto b = sf::dist::isend(*g_, x.t, partner, 7);
    b.wait();
    a.wait();
    check<int64_t>(y.t, [&](int64_t i) { return msg_val<int64_t>(s, wr(partner), 1, i); }, "received");
  }

  // Both directions at once in one batch (two tags), then self-send.
  void p2p_batch_case(int64_t n, Mem m1, Mem m2) {
    if (!begin(fmt::format("p2p/batch-bidir/n={}/{}/{}", n, mem_name(m1), mem_name(m2)))) return;
    const uint64_t s = seed();
    const int W = gW(), me = gme(), next = (me + 1) % W, prev = (me + W - 1) % W;
    Buf x1 = make({n}, DType::bf16, m1), x2 = make({n}, DType::bf16, m2);
    Buf y1 = make({n}, DType::bf16, m2), y2 = make({n}, DType::bf16, m1);
    fill_fn<sf::BFloat16>(x1.t, [&](int64_t i) { return msg_val<sf::BFloat16>(s, me_, 1, i); });
    fill_fn<sf::BFloat16>(x2.t, [&](int64_t i) { return msg_val<sf::BFloat16>(s, me_, 2, i); });
    auto w = sf::dist::batch_isend_irecv(*g_, {sf::dist::P2POp::send(x1.t, next, 1),
                                               sf::dist::P2POp::recv(y1.t, prev, 1),
                                               sf::dist::P2POp::send(x2.t, prev, 2),
                                               sf::dist::P2POp::recv(y2.t, next, 2)});
    for (size_t k = w.size(); k-- > 0;) w[k].wait();
    check<sf::BFloat16>(y1.t, [&](int64_t i) { return msg_val<sf::BFloat16>(s, wr(prev), 1, i); }, "from prev");
    check<sf::BFloat16>(y2.t, [&](int64_t i) { return msg_val<sf::BFloat16>(s, wr(next), 2, i); }, "from next");
  }

  void p2p_self_case(int64_t n, Mem smem, Mem rmem) {
    if (!begin(fmt::format("p2p/self/n={}/{}->{}", n, mem_name(smem), mem_name(rmem)))) return;
    const uint64_t s = seed();
    const int me = gme();
    Buf x = make({n}, DType::f32, smem), y = make({n}, DType::f32, rmem);
    fill_fn<float>(x.t, [&](int64_t i) { return msg_val<float>(s, me_, 5, i); });
    auto a = sf::dist::isend(*g_, x.t, me, 5);
    auto b = sf::dist::irecv(*g_, y.t, me, 5);
    a.wait();
    b.wait();
    check<float>(y.t, [&](int64_t i) { return msg_val<float>(s, me_, 5, i); }, "self-received");
  }

  // Several tags interleaved to rank+1: sends in one order, receives posted tag by
  // tag in another, waited in reverse; the k-th message of a tag must land in the
  // k-th receive of that tag. Sizes differ per message (one ~1 MiB).
  void p2p_tags_case(bool big) {
    if (!begin(fmt::format("p2p/tags-interleaved/{}", big ? "big" : "small"))) return;
    const uint64_t s = seed();
    const int W = gW(), me = gme(), next = (me + 1) % W, prev = (me + W - 1) % W;
    struct M {
      int tag, k;
    };
    const std::vector<M> send_order = {{1, 0}, {2, 0}, {2, 1}, {1, 1}, {3, 0}, {2, 2}, {1, 2}, {3, 1}};
    std::vector<M> recv_order = {{3, 0}, {3, 1}, {2, 0}, {2, 1}, {2, 2}, {1, 0}, {1, 1}, {1, 2}};
    auto len = [&](M m) -> int64_t { return big && m.tag == 2 && m.k == 1 ? (256 << 10) : 10 + 7 * m.tag + 3 * m.k; };
    auto id = [](M m) { return m.tag * 16 + m.k; };
    auto mem_of = [](M m) { return (m.tag + m.k) % 3 == 0 ? Mem::reg : (m.tag + m.k) % 3 == 1 ? Mem::symm : Mem::reg_view; };
    std::vector<Buf> xs, ys;
    std::vector<sf::dist::Work> works;
    // Allocate every buffer first (symmetric allocations are collective and
    // must happen in the same order on every rank).
    for (M m : send_order) xs.push_back(make({len(m)}, DType::f32, mem_of(m)));
    for (M m : recv_order) ys.push_back(make({len(m)}, DType::f32, mem_of({m.tag, 2 - m.k})));
    for (size_t k = 0; k < send_order.size(); ++k)
      fill_fn<float>(xs[k].t, [&](int64_t i) { return msg_val<float>(s, me_, id(send_order[k]), i); });
    // Interleave: post two receives, then sends, then the rest of the receives.
    for (size_t k = 0; k < 2; ++k) works.push_back(sf::dist::irecv(*g_, ys[k].t, prev, recv_order[k].tag));
    for (size_t k = 0; k < send_order.size(); ++k)
      works.push_back(sf::dist::isend(*g_, xs[k].t, next, send_order[k].tag));
    for (size_t k = 2; k < recv_order.size(); ++k)
      works.push_back(sf::dist::irecv(*g_, ys[k].t, prev, recv_order[k].tag));
    for (size_t k = works.size(); k-- > 0;) works[k].wait();
    for (size_t k = 0; k < recv_order.size(); ++k)
      check<float>(ys[k].t, [&](int64_t i) { return msg_val<float>(s, wr(prev), id(recv_order[k]), i); },
                   fmt::format("tag {} message {}", recv_order[k].tag, recv_order[k].k));
  }

  // Receive into a column of a 2-D tensor and into a 2-D sub-block; send from a
  // column (a view) and from a transposed block.
  void p2p_views_case(int64_t n, bool symm_bufs) {
    if (!begin(fmt::format("p2p/views/n={}/{}", n, symm_bufs ? "symm" : "reg"))) return;
    const uint64_t s = seed();
    const int W = gW(), me = gme(), next = (me + 1) % W, prev = (me + W - 1) % W;
    auto alloc = [&](Shape sh) {
      return symm_bufs ? sf::symm::empty(sh, DType::f32, *g_) : Tensor::empty_with(sf::regular_allocator(), sh, DType::f32);
    };
    Tensor src2d = alloc({n, 3}), dst2d = alloc({n, 3});
    Tensor srcm = alloc({8, 12}), dstm = alloc({10, 9});
    Tensor contig_in = symm_bufs ? Tensor::empty_with(sf::regular_allocator(), {n}, DType::f32) : sf::symm::empty({n}, DType::f32, *g_);
    fill_fn<float>(src2d, [&](int64_t i) { return msg_val<float>(s, me_, 1, i); });
    fill_fn<float>(srcm, [&](int64_t i) { return msg_val<float>(s, me_, 2, i); });
    fill_fn<float>(dst2d, [&](int64_t i) { return sentinel<float>(s, me_, i); });
    fill_fn<float>(dstm, [&](int64_t i) { return sentinel<float>(s ^ 9, me_, i); });
    Tensor send_col = src2d.as_strided({n}, {3}, 2);           // column 2
    Tensor recv_col = dst2d.as_strided({n}, {3}, 1);           // column 1
    Tensor send_blk = srcm.as_strided({6, 5}, {1, 12}, 13);    // transposed 5x6 block at (1,1)
    Tensor recv_blk = dstm.as_strided({6, 5}, {9, 1}, 2 * 9 + 3);  // 6x5 block at (2,3)
    auto w = sf::dist::batch_isend_irecv(*g_, {sf::dist::P2POp::send(send_col, next, 11),
                                               sf::dist::P2POp::recv(recv_col, prev, 11),
                                               sf::dist::P2POp::send(send_blk, next, 12),
                                               sf::dist::P2POp::recv(recv_blk, prev, 12),
                                               sf::dist::P2POp::send(send_col, prev, 13),
                                               sf::dist::P2POp::recv(contig_in, next, 13)});
    for (auto& k : w) k.wait();
    const int pw = wr(prev), nw = wr(next);
    check<float>(dst2d, [&](int64_t i) {
      return i % 3 == 1 ? msg_val<float>(s, pw, 1, (i / 3) * 3 + 2) : sentinel<float>(s, me_, i);
    }, "column received");
    check<float>(dstm, [&](int64_t i) {
      const int64_t r = i / 9, c = i % 9;
      if (r >= 2 && r < 8 && c >= 3 && c < 8) {
        const int64_t a = r - 2, b = c - 3;  // element (a, b) of the [6,5] send view
        return msg_val<float>(s, pw, 2, 13 + a * 1 + b * 12);
      }
      return sentinel<float>(s ^ 9, me_, i);
    }, "block received");
    check<float>(contig_in, [&](int64_t i) { return msg_val<float>(s, nw, 1, i * 3 + 2); }, "column from next");
  }

  void p2p_suite(bool full) {
    const bool q = opt_.quick || !full;
    std::vector<int64_t> sizes = q ? std::vector<int64_t>{3, 1000} : std::vector<int64_t>{0, 1, 3, 1000, 70000};
    for (int64_t n : sizes)
      for (Mem a : {Mem::symm, Mem::reg, Mem::reg_view})
        for (Mem b : {Mem::symm, Mem::reg, Mem::symm_view})
          p2p_ring_case(n, a, b, int((n + int64_t(a) + int64_t(b)) % 3));
    const int64_t big = 256 << 10;  // 1 MiB of f32
    for (Mem a : {Mem::symm, Mem::reg})
      for (Mem b : {Mem::symm, Mem::reg}) p2p_ring_case(big, a, b, int(a) + int(b) == 1 ? 2 : 0);
    for (int64_t n : {int64_t(3), int64_t(q ? 1000 : 64 << 10)})
      for (Mem a : {Mem::symm, Mem::reg})
        for (Mem b : {Mem::symm, Mem::reg}) {
          p2p_pair_case(n, a, b);
          p2p_self_case(n, a, b);
          p2p_batch_case(n, a, b);
        }
    p2p_self_case(big, Mem::reg, Mem::reg);
    p2p_pair_case(big / 2, Mem::symm, Mem::reg);
    p2p_tags_case(false);
    p2p_tags_case(true);
    p2p_views_case(3, true);
    p2p_views_case(5000, false);
    if (!q) {
      p2p_views_case(5000, true);
      p2p_views_case(3, false);
    }
  }

  // ------------------------------------------------------------ misc
  void barrier_case() {
    if (!begin("barrier")) return;
    for (int i = 0; i < 20; ++i) g_->barrier("dist_suite");
    ++checks_;
  }

  // The world-group forms of symmflow.h (world only).
  void world_forms_case() {
    if (!begin("world-forms")) return;
    const uint64_t s = seed();
    const int W = gW();
    Tensor x = sf::symm::empty({300}, DType::f32);
    fill_fn<float>(x, [&](int64_t i) { return gen<float>(Mode::hash, s, me_, i); });
    sf::dist::all_reduce_(x);
    check<float>(x, [&](int64_t i) {
      return ref_fold<float>(ReduceOp::sum, W, [&](int j) { return gen<float>(Mode::hash, s, j, i); });
    }, "all_reduce_(x)");
    Tensor out = Tensor::empty_with(sf::regular_allocator(), {300 * W}, DType::f32);
    sf::dist::all_gather(out, x);
    check<float>(out, [&](int64_t i) {
      return ref_fold<float>(ReduceOp::sum, W, [&](int j) { return gen<float>(Mode::hash, s, j, i % 300); });
    }, "all_gather(out, x)");
    // Out of place, torch's order (output first): y := max over ranks of x2.
    Tensor x2 = sf::symm::empty({300}, DType::f32), y = sf::symm::empty({300}, DType::f32);
    fill_fn<float>(x2, [&](int64_t i) { return gen<float>(Mode::hash, s + 1, me_, i); });
    sf::dist::all_reduce(y, x2, ReduceOp::max);
    check<float>(y, [&](int64_t i) {
      return ref_fold<float>(ReduceOp::max, W, [&](int j) { return gen<float>(Mode::hash, s + 1, j, i); });
    }, "all_reduce(y, x2, max)");
    // reduce_scatter(out, in): my chunk of the sum of every rank's `big`.
    Tensor big = sf::symm::empty({8 * W}, DType::f32), part = sf::symm::empty({8}, DType::f32);
    fill_fn<float>(big, [&](int64_t i) { return gen<float>(Mode::hash, s + 2, me_, i); });
    sf::dist::reduce_scatter(part, big);
    check<float>(part, [&](int64_t i) {
      return ref_fold<float>(ReduceOp::sum, W, [&](int j) { return gen<float>(Mode::hash, s + 2, j, me_ * 8 + i); });
    }, "reduce_scatter(part, big)");
    // all_to_all_single(out, in) with equal splits: 2 rows of 3 per peer.
    Tensor a2a_in = sf::symm::empty({2 * W, 3}, DType::f32), a2a_out = sf::symm::empty({2 * W, 3}, DType::f32);
    fill_fn<float>(a2a_in, [&](int64_t i) { return float(me_ * 1000 + i); });
    sf::dist::all_to_all_single(a2a_out, a2a_in);
    check<float>(a2a_out, [&](int64_t i) {
      const int64_t from = i / 6, k = i % 6;  // rank `from` sent me its rows 2*me_, 2*me_+1
      return float(from * 1000 + me_ * 6 + k);
    }, "all_to_all_single(out, in)");
    // tile_reduce onto root 0 and broadcast_ from the last rank.
    Tensor tile = sf::symm::empty({4, 4}, DType::f32), acc = sf::symm::empty({4, 4}, DType::f32);
    fill_fn<float>(tile, [&](int64_t i) { return float(me_ + i); });
    fill_fn<float>(acc, [&](int64_t) { return -1.0f; });
    sf::dist::tile_reduce(tile, acc, 0);
    check<float>(acc, [&](int64_t i) {
      if (me_ != 0) return -1.0f;
      return ref_fold<float>(ReduceOp::sum, W, [&](int j) { return float(j + i); });
    }, "tile_reduce(tile, acc, 0)");
    sf::dist::broadcast_(tile, W - 1);
    check<float>(tile, [&](int64_t i) { return float(W - 1 + i); }, "broadcast_(tile, W - 1)");
  }

  void run_group(const Group& grp) {
    if (!grp.g) return;
    g_ = grp.g;
    gname_ = grp.name;
    barrier_case();
    all_reduce_suite(grp.full);
    all_gather_suite(grp.full);
    reduce_scatter_suite(grp.full);
    all_to_all_suite(grp.full);
    broadcast_suite(grp.full);
    tile_reduce_suite(grp.full);
    p2p_suite(grp.full);
    if (grp.name == "world") world_forms_case();
    barrier_case();
    g_ = nullptr;
  }

  // --loop-seconds: checked all_reduce over the world until rank 0's clock says
  // stop (a flag in the reduced data, so every rank stops after the same call).
  void loop() {
    if (opt_.loop_seconds <= 0) return;
    g_ = &sf::dist::world();
    gname_ = "world";
    case_ = "world/loop";
    const int W = W_;
    const int64_t n = 16 << 10;
    Tensor x = sf::symm::empty({n + 1}, DType::f32);
    const auto t0 = Clock::now();
    int64_t iters = 0;
    for (;;) {
      if (opt_.die_rank == me_ && since(t0) >= opt_.die_after) {
        fmt::print(stderr, "rank {}: --die-rank: killing myself with SIGKILL after {} iterations\n", me_, iters);
        std::fflush(stderr);
        ::kill(::getpid(), SIGKILL);
      }
      const uint64_t s = mix64(uint64_t(iters));
      fill_fn<float>(x, [&](int64_t i) {
        if (i == n) return me_ == 0 && since(t0) >= opt_.loop_seconds ? 1.0f : 0.0f;
        return gen<float>(Mode::hash, s, me_, i);
      });
      sf::dist::all_reduce_(sf::dist::world(), x, ReduceOp::sum,
                            iters % 3 == 0 ? AllReduceAlgo::automatic
                            : iters % 3 == 1 ? AllReduceAlgo::one_shot : AllReduceAlgo::two_shot);
      const float* p = x.data<float>();
      for (int64_t i = 0; i < n; i += 97) {
        float want = ref_fold<float>(ReduceOp::sum, W, [&](int j) { return gen<float>(Mode::hash, s, j, i); });
        if (std::memcmp(&p[i], &want, 4) != 0) mismatch(fmt::format("loop iteration {}", iters), i, show(p[i]), show(want));
      }
      ++iters;
      if (p[n] != 0.0f) break;
    }
    if (me_ == 0) fmt::print("loop: {} all_reduce iterations in {:.2f} s\n", iters, since(t0));
    g_ = nullptr;
  }
};

int run(const Options& opt) {
  const auto t0 = Clock::now();
  sf::dist::InitOptions io;
  if (!std::getenv("SYMMFLOW_SYMM_HEAP_BYTES")) io.heap_bytes = size_t(256) << 20;
  sf::dist::init(io);
  auto& world = sf::dist::world();
  const int W = world.size(), me = world.rank();
  if (opt.die_rank >= W) usage_error(fmt::format("--die-rank {} is not a rank (world size {})", opt.die_rank, W));

  // Subgroups, created collectively in the same order on every rank.
  std::vector<Group> groups;
  groups.push_back({"world", &world, true});
  std::vector<int> even, ends, rev;
  for (int r = 0; r < W; r += 2) even.push_back(r);
  ends.push_back(0);
  if (W > 1) ends.push_back(W - 1);
  for (int r = W - 1; r >= 0; --r) rev.push_back(r);
  groups.push_back({"even", sf::dist::new_group(even, "suite-even"), false});
  groups.push_back({"ends", sf::dist::new_group(ends, "suite-ends"), false});
  groups.push_back({"reverse", sf::dist::new_group(rev, "suite-reverse"), true});

  Suite suite(opt);
  for (const Group& g : groups) {
    suite.run_group(g);
    world.barrier("dist_suite: between groups");
  }
  const double battery_s = since(t0);
  suite.loop();
  world.barrier("dist_suite: end");

  fmt::print("digest rank={} world={} {:016x}\n", me, W, suite.digest_.h);
  if (me == 0) {
    fmt::print("PASS {} checks\n", suite.checks_);
    fmt::print("battery {:.2f} s, backend {}\n", battery_s, sf::dist::backend().name());
  }
  std::fflush(stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Options opt = parse_args(argc, argv);
  try {
    return run(opt);
  } catch (const std::exception& e) {
    std::string r = "?";  // the world rank when known (mpirun does not set SYMMFLOW_RANK)
    if (sf::dist::is_initialized()) r = std::to_string(sf::dist::backend().rank());
    else if (const char* env = std::getenv("SYMMFLOW_RANK")) r = env;
    fmt::print(stderr, "sf_dist_suite: rank {}: {}\n", r, e.what());
    std::fflush(stderr);
    return 1;
  }
}
