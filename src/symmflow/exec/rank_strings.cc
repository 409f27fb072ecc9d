#include "symmflow/exec/rank_strings.h"

#include <cstring>

#include "symmflow/core/tensor.h"
#include "symmflow/runtime/collectives/collectives.h"
#include "symmflow/runtime/world.h"

namespace symmflow::exec {

std::vector<std::vector<std::string>> gather_strings(const std::vector<std::string>& mine, int64_t count) {
  auto& world = dist::world();
  const int64_t width = 64;  // i32 elements: 256 chars
  Tensor text = Tensor::empty({count * width}, DType::i32);
  std::memset(text.data_ptr(), 0, text.nbytes());
  for (size_t i = 0; i < mine.size() && int64_t(i) < count; ++i)
    std::memcpy(text.data<int32_t>() + int64_t(i) * width, mine[i].data(),
                std::min<size_t>(mine[i].size(), size_t(width * 4 - 1)));
  Tensor all = Tensor::empty({world.size() * count * width}, DType::i32);
  dist::all_gather(world, all, text);
  std::vector<std::vector<std::string>> out(size_t(world.size()));
  for (int r = 0; r < world.size(); ++r)
    for (int64_t i = 0; i < count; ++i) {
      const char* p = reinterpret_cast<const char*>(all.data<int32_t>() + (r * count + i) * width);
      out[size_t(r)].emplace_back(p, strnlen(p, size_t(width * 4)));
    }
  return out;
}

}  // namespace symmflow::exec
