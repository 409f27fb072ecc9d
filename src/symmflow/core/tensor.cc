#include "symmflow/core/tensor.h"

#include <fmt/format.h>

#include "symmflow/core/checked.h"
#include "symmflow/core/overlap.h"

namespace symmflow {

Tensor::Tensor(std::shared_ptr<Storage> storage, DType dtype, Shape sizes, Shape strides,
               int64_t storage_offset)
    : impl_(std::make_shared<TensorImpl>()) {
  SF_CHECK(sizes.size() == strides.size(), "tensor: {} sizes but {} strides", sizes.size(),
           strides.size());
  for (int64_t s : sizes) SF_CHECK(s >= 0, "tensor: negative size in {}", shape_to_string(sizes));
  SF_CHECK(storage_offset >= 0, "tensor: negative storage offset {}", storage_offset);
  // The cap on every tensor, meta included: numel() and nbytes() cannot wrap.
  const int64_t bytes = nbytes_of(sizes, element_size(dtype));
  if (storage && bytes > 0) {
    // The furthest element must lie inside the storage.
    for (int64_t s : strides) SF_CHECK(s >= 0, "tensor: negative stride in {}", shape_to_string(strides));
    const int64_t need = checked_mul(storage_extent(sizes, strides, storage_offset), int64_t(element_size(dtype)),
                                     "tensor: the bytes its view reaches");
    SF_CHECK(uint64_t(need) <= storage->nbytes(),
             "tensor: view {} with strides {} at offset {} needs {} bytes, storage has {}",
             shape_to_string(sizes), shape_to_string(strides), storage_offset, need,
             storage->nbytes());
  }
  impl_->storage = std::move(storage);
  impl_->dtype = dtype;
  impl_->sizes = std::move(sizes);
  impl_->strides = std::move(strides);
  impl_->storage_offset = storage_offset;
}

Tensor Tensor::empty(Shape sizes, DType dtype) {
  return empty_with(current_allocator(), std::move(sizes), dtype);
}

Tensor Tensor::empty_with(Allocator& alloc, Shape sizes, DType dtype) {
  for (int64_t s : sizes) SF_CHECK(s >= 0, "empty: negative size in {}", shape_to_string(sizes));
  auto storage = alloc.allocate(size_t(nbytes_of(sizes, element_size(dtype))));
  Shape strides = contiguous_strides(sizes);
  return Tensor(std::move(storage), dtype, std::move(sizes), std::move(strides), 0);
}

Tensor Tensor::meta(Shape sizes, DType dtype, Shape strides) {
  if (strides.empty() && !sizes.empty()) strides = contiguous_strides(sizes);
  return Tensor(nullptr, dtype, std::move(sizes), std::move(strides), 0);
}

int64_t Tensor::size(int64_t d) const { return sizes()[wrap_dim(d, dim())]; }
int64_t Tensor::stride(int64_t d) const { return strides()[wrap_dim(d, dim())]; }

bool Tensor::is_contiguous() const { return is_one_run(sizes(), strides()); }

void* Tensor::data_ptr() const {
  SF_CHECK(!is_meta(), "data access on a meta tensor {}", type_string());
  return static_cast<char*>(impl().storage->data()) + storage_offset() * int64_t(itemsize());
}

double Tensor::item() const {
  SF_CHECK(numel() == 1, "item(): expected a one-element tensor, got {}", type_string());
  double v = 0;
  SF_DISPATCH(dtype(), v = double(*static_cast<const T*>(data_ptr())));
  return v;
}

Tensor Tensor::as_strided(Shape sizes, Shape strides, int64_t storage_offset) const {
  if (is_meta()) {
    Tensor t = meta(std::move(sizes), dtype(), std::move(strides));
    t.impl_->storage_offset = storage_offset;
    return t;
  }
  return Tensor(storage(), dtype(), std::move(sizes), std::move(strides), storage_offset);
}

bool Tensor::shares_storage(const Tensor& other) const {
  return defined() && other.defined() && storage() && storage() == other.storage();
}

void Tensor::set_(std::shared_ptr<Storage> storage, Shape sizes, Shape strides, int64_t offset) {
  Tensor fresh(std::move(storage), dtype(), std::move(sizes), std::move(strides), offset);
  *impl_ = *fresh.impl_;  // every handle of this tensor sees the new geometry
}

std::string Tensor::type_string() const {
  if (!defined()) return "undefined";
  return fmt::format("{}{}", dtype_name(dtype()), shape_to_string(sizes()));
}

std::string Tensor::to_string() const {
  if (!defined() || is_meta()) return type_string();
  std::string s = type_string() + " {";
  // Walk the first few elements in logical (row-major) order.
  int64_t n = std::min<int64_t>(numel(), 8);
  Shape idx(dim(), 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t off = 0;
    for (int64_t d = 0; d < dim(); ++d) off += idx[d] * strides()[d];
    const char* p = static_cast<const char*>(data_ptr()) + off * int64_t(itemsize());
    double v = 0;
    SF_DISPATCH(dtype(), v = double(*reinterpret_cast<const T*>(p)));
    s += fmt::format("{}{}", k ? ", " : "", v);
    for (int64_t d = dim() - 1; d >= 0; --d) {
      if (++idx[d] < sizes()[d]) break;
      idx[d] = 0;
    }
  }
  if (numel() > n) s += ", ...";
  return s + "}";
}

}  // namespace symmflow
