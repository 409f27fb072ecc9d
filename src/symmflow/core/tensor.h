// Tensor: a handle to a TensorImpl (dtype, sizes, strides, storage offset) over a
// shared Storage. Copying a Tensor copies the handle (as in PyTorch); a view is a
// new TensorImpl over the same Storage. A Tensor without storage is a *meta*
// tensor: it has a type but no data (Meta kernels produce them while tracing).
//
//   auto t = Tensor::empty({2, 3}, DType::f32);
//   t.data<float>()[0] = 1.0f;
//   auto v = t.as_strided({3}, {1}, 3);   // second row, shares t's storage
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "symmflow/core/dtype.h"
#include "symmflow/core/error.h"
#include "symmflow/core/shape.h"
#include "symmflow/core/storage.h"

namespace symmflow {

struct TensorImpl {
  std::shared_ptr<Storage> storage;  // null for meta tensors
  DType dtype = DType::f32;
  Shape sizes;
  Shape strides;
  int64_t storage_offset = 0;  // in elements
};

class Tensor {
 public:
  Tensor() = default;  // undefined
  Tensor(std::shared_ptr<Storage> storage, DType dtype, Shape sizes, Shape strides,
         int64_t storage_offset = 0);

  // Allocates from the thread's current allocator (symmetric inside a symm::Scope).
  static Tensor empty(Shape sizes, DType dtype = DType::f32);
  // A contiguous tensor on a given storage kind, explicitly.
  static Tensor empty_with(Allocator& alloc, Shape sizes, DType dtype = DType::f32);
  // A tensor with a type but no data.
  static Tensor meta(Shape sizes, DType dtype, Shape strides = {});

  bool defined() const { return impl_ != nullptr; }
  bool is_meta() const { return impl().storage == nullptr; }
  DType dtype() const { return impl().dtype; }
  const Shape& sizes() const { return impl().sizes; }
  const Shape& strides() const { return impl().strides; }
  int64_t storage_offset() const { return impl().storage_offset; }
  int64_t dim() const { return int64_t(impl().sizes.size()); }
  int64_t size(int64_t d) const;
  int64_t stride(int64_t d) const;
  int64_t numel() const { return numel_of(impl().sizes); }
  size_t itemsize() const { return element_size(dtype()); }
  size_t nbytes() const { return size_t(numel()) * itemsize(); }
  bool is_contiguous() const;
  bool is_symmetric() const { return !is_meta() && impl().storage->is_symmetric(); }
  const std::shared_ptr<Storage>& storage() const { return impl().storage; }

  // Byte address of element 0 of this view.
  void* data_ptr() const;
  template <typename T>
  T* data() const {
    SF_CHECK(DTypeOf<T>::value == dtype(), "data<{}>() on a tensor of dtype {}",
             dtype_name(DTypeOf<T>::value), dtype_name(dtype()));
    return static_cast<T*>(data_ptr());
  }
  // The single element of a one-element tensor, converted to double.
  double item() const;

  // A view with the given geometry over the same storage (bounds are checked).
  Tensor as_strided(Shape sizes, Shape strides, int64_t storage_offset) const;
  // True when both tensors view the same Storage.
  bool shares_storage(const Tensor& other) const;
  // True when both handles are the same TensorImpl (the same tensor, not a view).
  bool is_same(const Tensor& other) const { return impl_ == other.impl_; }
  // Replaces this tensor's geometry in place (used by resize_-like ops and out=).
  void set_(std::shared_ptr<Storage> storage, Shape sizes, Shape strides, int64_t offset);

  std::string type_string() const;  // "f32[4, 1024]"
  std::string to_string() const;    // type and up to a few elements, for errors/tests
  const TensorImpl* unsafe_impl() const { return impl_.get(); }

 private:
  const TensorImpl& impl() const {
    SF_CHECK(impl_ != nullptr, "use of an undefined Tensor");
    return *impl_;
  }
  std::shared_ptr<TensorImpl> impl_;
};

}  // namespace symmflow
