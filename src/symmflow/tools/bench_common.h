// Shared by the symmflow and MPI collective benchmarks, so both time the same
// work: deterministic inputs, the size grammar, the timing discipline
// (bench_timing.h) and the JSON record.
//
// Input element i of rank r is input_value(r, i): a small integer, so sums over
// any number of ranks are exact in f32 and every implementation must agree
// bit for bit with the reference each rank computes locally.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "symmflow/core/params.h"
#include "symmflow/tools/bench_timing.h"

namespace sfbench {

inline float input_value(int rank, int64_t i) {
  return float(int((rank * 131 + i * 7) % 17) - 8);
}

// "1K-64M" (powers of two), "1K,4K,4M" (a list) or "64M" (one size); each size
// is params::parse_bytes' (K/M/G are 2^10..).
inline int64_t parse_bytes(const std::string& s) { return int64_t(symmflow::params::parse_bytes(s, "--sizes")); }

inline std::vector<int64_t> parse_sizes(const std::string& spec) {
  std::vector<int64_t> out;
  if (auto dash = spec.find('-'); dash != std::string::npos) {
    int64_t lo = parse_bytes(spec.substr(0, dash)), hi = parse_bytes(spec.substr(dash + 1));
    if (lo > hi) throw std::invalid_argument("size range '" + spec + "' runs backwards");
    for (int64_t b = lo; b <= hi; b *= 2) out.push_back(b);
    return out;
  }
  size_t start = 0;
  while (start <= spec.size()) {
    size_t comma = spec.find(',', start);
    if (comma == std::string::npos) comma = spec.size();
    out.push_back(parse_bytes(spec.substr(start, comma - start)));
    start = comma + 1;
  }
  return out;
}

using symmflow::params::format_bytes;

// One JSON record of DESIGN.md §5.
inline std::string record(const std::string& op, const std::string& impl, int nproc, int64_t bytes,
                          double median_us) {
  char buf[256];
  double gbps = median_us > 0 ? double(bytes) / (median_us * 1e3) : 0.0;
  std::snprintf(buf, sizeof buf,
                "{\"op\": \"%s\", \"impl\": \"%s\", \"nproc\": %d, \"bytes\": %lld, "
                "\"median_us\": %.3f, \"algbw_gbps\": %.3f}",
                op.c_str(), impl.c_str(), nproc, (long long)bytes, median_us, gbps);
  return buf;
}

}  // namespace sfbench
