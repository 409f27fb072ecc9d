#include "symmflow/exec/input_files.h"

#include <fmt/format.h>

#include <filesystem>

#include "symmflow/exec/npy.h"
#include "symmflow/ir/parser.h"

namespace symmflow::exec {

std::vector<std::string> input_file_names(const std::string& name, int rank) {
  return {fmt::format("{}.rank{}.npy", name, rank), name + ".npy"};
}

std::optional<Tensor> read_input_file(const std::string& dir, const std::string& name,
                                      const ir::TensorType& type, int rank) {
  namespace fs = std::filesystem;
  std::string path;
  for (const auto& file : input_file_names(name, rank))
    if (fs::exists(fs::path(dir) / file)) {
      path = (fs::path(dir) / file).string();
      break;
    }
  if (path.empty()) return std::nullopt;
  Tensor t;
  try {
    t = read_npy(path, type.dtype);
  } catch (const Error& e) {
    throw ir::ParseError(fmt::format("input %{}: {}", name, e.what()));
  }
  if (t.sizes() != type.sizes)
    throw ir::ParseError(
        fmt::format("input %{}: {} holds {} but the signature says {}", name, path, t.type_string(), type.str()));
  return t;
}

}  // namespace symmflow::exec
