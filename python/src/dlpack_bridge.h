// Tensors across the Python boundary without copies, both ways, through DLPack.
//
// torch (or numpy through torch.from_numpy) hands over a "dltensor" capsule; we
// wrap its memory in a Storage whose deleter gives the DLManagedTensor back, so
// the torch tensor stays alive exactly as long as symmflow holds it. A symmetric
// Storage we exported earlier (sft.empty, a collective's result) is found again
// by address, so a torch view of symmetric memory comes back symmetric — the
// compiled program then uses it in place instead of copying it in.
//
//   Tensor t = tensor_from_dlpack(capsule, /*as_bool=*/false);
//   py::capsule c = tensor_to_dlpack(t);        // torch.utils.dlpack.from_dlpack(c)
//
// torch 1.13 cannot export bool through DLPack ("Bool type is not supported"),
// so Python views bool tensors as uint8 and passes as_bool; a bool tensor goes
// out as uint8 and Python views it back as bool.
#pragma once
#include <pybind11/pybind11.h>

#include "symmflow/core/tensor.h"

namespace symmflow::python {

Tensor tensor_from_dlpack(pybind11::capsule capsule, bool as_bool);
pybind11::capsule tensor_to_dlpack(const Tensor& t);

// The symmetric storage that holds [ptr, ptr + 1), if we exported one (it is
// still alive); nullptr otherwise.
std::shared_ptr<Storage> symmetric_storage_at(const void* ptr);

}  // namespace symmflow::python
