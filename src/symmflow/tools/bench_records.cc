#include "symmflow/tools/bench_records.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

namespace symmflow::tools {

std::vector<BenchRecord> parse_records(const std::string& text) {
  std::vector<BenchRecord> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    auto brace = line.find('{');
    if (brace == std::string::npos) continue;
    auto j = nlohmann::json::parse(line.substr(brace), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.contains("op")) continue;
    BenchRecord r;
    r.op = j.value("op", "");
    r.impl = j.value("impl", "");
    r.nproc = j.value("nproc", 0);
    r.bytes = j.value("bytes", 0LL);
    r.median_us = j.value("median_us", 0.0);
    r.algbw_gbps = j.value("algbw_gbps", j.value("gbps", 0.0));
    r.nodes = j.value("nodes", 0);
    out.push_back(r);
  }
  return out;
}

std::string records_to_json(const std::vector<BenchRecord>& rs) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& r : rs) {
    if (r.op == "memcpy")
      a.push_back({{"op", "memcpy"}, {"nproc", r.nproc}, {"bytes", r.bytes}, {"gbps", r.algbw_gbps},
                   {"median_us", r.median_us}});
    else
      a.push_back({{"op", r.op}, {"impl", r.impl}, {"nproc", r.nproc}, {"bytes", r.bytes},
                   {"median_us", r.median_us}, {"algbw_gbps", r.algbw_gbps}});
    if (r.nodes > 0) a.back()["nodes"] = r.nodes;
  }
  return a.dump(2) + "\n";
}

std::string latency_plot_svg(const std::vector<BenchRecord>& rs, const std::string& title) {
  const double W = 900, H = 560, L = 80, R = 230, T = 50, B = 60;
  std::map<std::string, std::vector<std::pair<double, double>>> lines;
  double xmin = 1e300, xmax = 0, ymin = 1e300, ymax = 0;
  for (const auto& r : rs) {
    if (r.median_us <= 0 || r.bytes <= 0) continue;
    lines[r.op + " / " + r.impl].push_back({double(r.bytes), r.median_us});
    xmin = std::min(xmin, double(r.bytes)), xmax = std::max(xmax, double(r.bytes));
    ymin = std::min(ymin, r.median_us), ymax = std::max(ymax, r.median_us);
  }
  if (lines.empty()) return "<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n";
  auto lx0 = std::floor(std::log2(xmin)), lx1 = std::ceil(std::log2(xmax));
  auto ly0 = std::floor(std::log10(ymin)), ly1 = std::ceil(std::log10(ymax));
  if (lx1 == lx0) lx1 += 1;
  if (ly1 == ly0) ly1 += 1;
  auto px = [&](double b) { return L + (std::log2(b) - lx0) / (lx1 - lx0) * (W - L - R); };
  auto py = [&](double us) { return H - B - (std::log10(us) - ly0) / (ly1 - ly0) * (H - T - B); };
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" "
      "font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{}\" y=\"25\" font-size=\"16\">{}</text>\n",
      W, H, L, title);
  for (double e = lx0; e <= lx1; e += 2) {  // x grid every 4x
    double x = px(std::pow(2.0, e));
    long long b = (long long)std::llround(std::pow(2.0, e));
    std::string label = b >= (1 << 20) ? fmt::format("{}M", b >> 20)
                        : b >= 1024    ? fmt::format("{}K", b >> 10)
                                       : fmt::format("{}", b);
    s += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#ddd\"/><text x=\"{0}\" "
                     "y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
                     x, T, H - B, H - B + 18, label);
  }
  for (double e = ly0; e <= ly1; e += 1) {
    double y = py(std::pow(10.0, e));
    s += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#ddd\"/><text x=\"{3}\" "
                     "y=\"{4}\" text-anchor=\"end\">{5:g}</text>\n",
                     L, y, W - R, L - 6, y + 4, std::pow(10.0, e));
  }
  s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">message size (bytes)</text>\n",
                   (L + W - R) / 2, H - 15);
  s += fmt::format("<text x=\"18\" y=\"{}\" transform=\"rotate(-90 18 {})\" text-anchor=\"middle\">"
                   "median latency (us)</text>\n",
                   (T + H - B) / 2, (T + H - B) / 2);
  static const char* colors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                                 "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#000000", "#aec7e8"};
  int i = 0;
  for (auto& [name, pts] : lines) {
    std::sort(pts.begin(), pts.end());
    const char* c = colors[i % 12];
    bool mpi = name.find("mpi") != std::string::npos;
    std::string poly;
    for (auto [b, us] : pts) poly += fmt::format("{:.1f},{:.1f} ", px(b), py(us));
    s += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{} points=\"{}\"/>\n", c,
                     mpi ? " stroke-dasharray=\"6,4\"" : "", poly);
    double ly = T + 18.0 * i;
    s += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" stroke-width=\"2\"{4}/>"
                     "<text x=\"{5}\" y=\"{6}\">{7}</text>\n",
                     W - R + 10, ly, W - R + 40, c, mpi ? " stroke-dasharray=\"6,4\"" : "", W - R + 46,
                     ly + 4, name);
    ++i;
  }
  return s + "</svg>\n";
}

}  // namespace symmflow::tools
