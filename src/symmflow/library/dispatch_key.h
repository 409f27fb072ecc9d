// DispatchKey: which kernel of an operator runs. CPU kernels compute; Meta kernels
// compute only output types (meta tensors), which is what tracing needs.
#pragma once
#include <cstddef>
#include <optional>
#include <string_view>

namespace symmflow {

enum class DispatchKey { CPU, Meta };
inline constexpr size_t kNumDispatchKeys = 2;

inline std::string_view dispatch_key_name(DispatchKey k) {
  return k == DispatchKey::CPU ? "CPU" : "Meta";
}

inline std::optional<DispatchKey> parse_dispatch_key(std::string_view s) {
  if (s == "CPU") return DispatchKey::CPU;
  if (s == "Meta") return DispatchKey::Meta;
  return std::nullopt;
}

}  // namespace symmflow
