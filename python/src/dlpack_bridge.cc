#include "dlpack_bridge.h"

#include <dlpack/dlpack.h>
#include <fmt/format.h>

#include <map>
#include <mutex>

#include "symmflow/core/error.h"

namespace py = pybind11;

namespace symmflow::python {
namespace {

// Symmetric storages handed to Python, by start address. Entries are weak: the
// torch tensors own the storages; a dead entry is pruned on the next insert.
std::mutex registry_mu;
std::map<uintptr_t, std::weak_ptr<Storage>>& registry() {
  static auto* r = new std::map<uintptr_t, std::weak_ptr<Storage>>;  // outlives every exit-time release
  return *r;
}

void remember_symmetric(const std::shared_ptr<Storage>& s) {
  std::lock_guard lk(registry_mu);
  auto& r = registry();
  for (auto it = r.begin(); it != r.end();) it = it->second.expired() ? r.erase(it) : std::next(it);
  r[reinterpret_cast<uintptr_t>(s->data())] = s;
}

bool dtype_from_dl(DLDataType t, bool as_bool, DType* out) {
  if (t.lanes != 1) return false;
  if (as_bool) {
    if ((t.code == kDLUInt || t.code == kDLInt) && t.bits == 8) return *out = DType::boolean, true;
    return false;
  }
  if (t.code == kDLFloat && t.bits == 32) return *out = DType::f32, true;
  if (t.code == kDLFloat && t.bits == 64) return *out = DType::f64, true;
  if (t.code == kDLFloat && t.bits == 16) return *out = DType::f16, true;
  if (t.code == kDLBfloat && t.bits == 16) return *out = DType::bf16, true;
  if (t.code == kDLInt && t.bits == 32) return *out = DType::i32, true;
  if (t.code == kDLInt && t.bits == 64) return *out = DType::i64, true;
  return false;
}

DLDataType dtype_to_dl(DType d) {
  switch (d) {
    case DType::f32: return {kDLFloat, 32, 1};
    case DType::f64: return {kDLFloat, 64, 1};
    case DType::f16: return {kDLFloat, 16, 1};
    case DType::bf16: return {kDLBfloat, 16, 1};
    case DType::i32: return {kDLInt, 32, 1};
    case DType::i64: return {kDLInt, 64, 1};
    case DType::boolean: return {kDLUInt, 8, 1};
  }
  throw Error("to_dlpack: unknown dtype");
}

// Bytes from the first element to one past the last (0 for an empty tensor).
size_t extent_bytes(const Shape& sizes, const Shape& strides, size_t itemsize) {
  int64_t last = 0;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 0) return 0;
    SF_CHECK(strides[d] >= 0, "from_dlpack: negative stride {} in dim {} (symmflow tensors have non-negative strides)",
             strides[d], d);
    last += (sizes[d] - 1) * strides[d];
  }
  return size_t(last + 1) * itemsize;
}

// What a DLManagedTensor we export keeps alive: the tensor (so its storage) and
// the shape arrays DLPack points into.
struct Exported {
  Tensor tensor;
  std::vector<int64_t> shape, strides;
  DLManagedTensor dl{};
};

}  // namespace

std::shared_ptr<Storage> symmetric_storage_at(const void* ptr) {
  std::lock_guard lk(registry_mu);
  auto& r = registry();
  auto p = reinterpret_cast<uintptr_t>(ptr);
  auto it = r.upper_bound(p);
  if (it == r.begin()) return nullptr;
  --it;
  auto s = it->second.lock();
  if (!s || p >= it->first + s->nbytes()) return nullptr;
  return s;
}

Tensor tensor_from_dlpack(py::capsule capsule, bool as_bool) {
  SF_CHECK(std::string_view(capsule.name() ? capsule.name() : "") == "dltensor",
           "from_dlpack: expected an unused \"dltensor\" capsule (a DLPack capsule can be consumed once)");
  auto* dl = static_cast<DLManagedTensor*>(capsule.get_pointer());
  const DLTensor& t = dl->dl_tensor;
  SF_CHECK(t.device.device_type == kDLCPU,
           "a tensor on device type {} (DLPack code): symmflow runs on CPU tensors; move it with .cpu() first",
           int(t.device.device_type));
  DType dtype;
  SF_CHECK(dtype_from_dl(t.dtype, as_bool, &dtype),
           "a tensor of DLPack dtype (code {}, {} bits, {} lanes): symmflow's dtypes are f32, f64, bf16, f16, i32, "
           "i64 and bool",
           int(t.dtype.code), int(t.dtype.bits), int(t.dtype.lanes));
  Shape sizes(t.shape, t.shape + t.ndim);
  Shape strides = t.strides ? Shape(t.strides, t.strides + t.ndim) : contiguous_strides(sizes);
  char* data = static_cast<char*>(t.data) + t.byte_offset;
  const size_t isz = element_size(dtype);
  const size_t extent = extent_bytes(sizes, strides, isz);
  // Consumed: from here on the capsule's destructor must not free it.
  PyCapsule_SetName(capsule.ptr(), "used_dltensor");
  if (auto s = symmetric_storage_at(data)) {
    const auto off = size_t(data - static_cast<char*>(s->data()));
    if (off % isz == 0 && off + extent <= s->nbytes()) {
      dl->deleter(dl);  // the symmetric Storage itself keeps the bytes alive
      return Tensor(s, dtype, sizes, strides, int64_t(off / isz));
    }
  }
  auto storage = std::make_shared<Storage>(data, extent, [dl](void*) {
    if (dl->deleter) dl->deleter(dl);
  });
  return Tensor(std::move(storage), dtype, std::move(sizes), std::move(strides), 0);
}

py::capsule tensor_to_dlpack(const Tensor& t) {
  SF_CHECK(!t.is_meta(), "to_dlpack: a meta tensor has no data");
  if (t.is_symmetric()) remember_symmetric(t.storage());
  auto* e = new Exported{t, t.sizes(), t.strides()};
  DLTensor& d = e->dl.dl_tensor;
  d.data = t.data_ptr();  // storage offset already applied
  d.device = {kDLCPU, 0};
  d.ndim = int(e->shape.size());
  d.dtype = dtype_to_dl(t.dtype());
  d.shape = e->shape.data();
  d.strides = e->strides.data();
  d.byte_offset = 0;
  e->dl.manager_ctx = e;
  e->dl.deleter = [](DLManagedTensor* m) { delete static_cast<Exported*>(m->manager_ctx); };
  return py::capsule(&e->dl, "dltensor", [](PyObject* cap) {
    // Not consumed by a framework: free it ourselves.
    if (PyCapsule_IsValid(cap, "dltensor")) {
      auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
      if (m && m->deleter) m->deleter(m);
    }
  });
}

}  // namespace symmflow::python
