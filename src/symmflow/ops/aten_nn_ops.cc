// aten:: ops a traced nn.Module emits (make_fx, PyTorch 1.13) beyond the plain
// pointwise and view ops: the softmax internals, layer_norm, embedding, indexing
// (index_select, index, gather), losses, attention masks (masked_fill, triu/tril), with
// PyTorch's schemas.
#include "symmflow/kernels/embedding.h"
#include "symmflow/kernels/indexing.h"
#include "symmflow/kernels/layer_norm.h"
#include "symmflow/kernels/loss.h"
#include "symmflow/kernels/masking.h"
#include "symmflow/kernels/softmax.h"
#include "symmflow/ops/boxing.h"

namespace symmflow::ops {
namespace k = symmflow::kernels;

namespace {

// _softmax / _log_softmax: what F.softmax(x, dim) lowers to. half_to_float (f16 in,
// f32 out) is a CUDA-only path; PyTorch's CPU kernel refuses it, and integer inputs.
template <bool kLog>
Results softmax_internal(OpContext&, Args a) {
  const char* op = kLog ? "_log_softmax" : "_softmax";
  const Tensor& x = tensor_arg(a, 0);
  SF_CHECK(!a[2].to_bool(), "{}: softmax with half to float conversion is not supported on CPU", op);
  SF_CHECK(is_floating(x.dtype()), "{}: not implemented for {}", op, x.type_string());
  return {kLog ? k::log_softmax(x, a[1].to_int()) : k::softmax(x, a[1].to_int())};
}

void register_softmax(Library& m) {
  m.def("_softmax(Tensor self, int dim, bool half_to_float) -> Tensor");
  m.def("_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor");
  impl_both(m, "_softmax", softmax_internal<false>);
  impl_both(m, "_log_softmax", softmax_internal<true>);
}

void register_layer_norm(Library& m) {
  m.def("native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)");
  m.def("layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, bool cudnn_enable=True) -> Tensor");
  impl_both(m, "native_layer_norm", [](OpContext&, Args a) -> Results {
    auto r = k::native_layer_norm(tensor_arg(a, 0), int_list_arg(a, 1), a[2].to_optional_tensor(),
                                  a[3].to_optional_tensor(), a[4].to_double());
    return {r.out, r.mean, r.rstd};
  });
  impl_both(m, "layer_norm", [](OpContext&, Args a) -> Results {
    return {k::native_layer_norm(tensor_arg(a, 0), int_list_arg(a, 1), a[2].to_optional_tensor(),
                                 a[3].to_optional_tensor(), a[4].to_double()).out};
  });
}

void register_embedding(Library& m) {
  // padding_idx, scale_grad_by_freq and sparse only shape PyTorch's gradient.
  m.def("embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False) -> Tensor");
  impl_both(m, "embedding", [](OpContext&, Args a) -> Results {
    return {k::embedding(tensor_arg(a, 0), tensor_arg(a, 1))};
  });
}

// x.index_select(d, i), x[idx] (index.Tensor), torch.gather.
void register_indexing(Library& m) {
  m.def("index_select(Tensor self, int dim, Tensor index) -> Tensor");
  m.def("index.Tensor(Tensor self, Tensor?[] indices) -> Tensor");
  m.def("gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor");
  impl_both(m, "index_select", [](OpContext&, Args a) -> Results {
    return {k::index_select(tensor_arg(a, 0), a[1].to_int(), tensor_arg(a, 2))};
  });
  impl_both(m, "index.Tensor", [](OpContext&, Args a) -> Results {
    return {k::index(tensor_arg(a, 0), a[1].to_optional_tensor_list())};
  });
  impl_both(m, "gather", [](OpContext&, Args a) -> Results {
    return {k::gather(tensor_arg(a, 0), a[1].to_int(), tensor_arg(a, 2))};
  });
}

// F.cross_entropy (after _log_softmax) and F.mse_loss.
void register_losses(Library& m) {
  m.def("nll_loss_forward(Tensor self, Tensor target, Tensor? weight, int reduction, SymInt ignore_index) "
        "-> (Tensor output, Tensor total_weight)");
  m.def("mse_loss(Tensor self, Tensor target, int reduction=1) -> Tensor");
  impl_both(m, "nll_loss_forward", [](OpContext&, Args a) -> Results {
    auto [out, total] = k::nll_loss_forward(tensor_arg(a, 0), tensor_arg(a, 1), a[2].to_optional_tensor(),
                                            a[3].to_int(), a[4].to_int());
    return {out, total};
  });
  impl_both(m, "mse_loss", [](OpContext&, Args a) -> Results {
    return {k::mse_loss(tensor_arg(a, 0), tensor_arg(a, 1), a[2].to_int())};
  });
}

void register_masks(Library& m) {
  m.def("masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor");
  m.def("masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor");
  m.def("masked_fill_.Scalar(Tensor(a!) self, Tensor mask, Scalar value) -> Tensor(a!)");
  m.def("masked_fill_.Tensor(Tensor(a!) self, Tensor mask, Tensor value) -> Tensor(a!)");
  impl_both(m, "masked_fill.Scalar", [](OpContext&, Args a) -> Results {
    return {k::masked_fill(tensor_arg(a, 0), tensor_arg(a, 1), scalar_arg(a, 2))};
  });
  impl_both(m, "masked_fill.Tensor", [](OpContext&, Args a) -> Results {
    return {k::masked_fill(tensor_arg(a, 0), tensor_arg(a, 1), tensor_arg(a, 2))};
  });
  impl_both(m, "masked_fill_.Scalar", [](OpContext&, Args a) -> Results {
    return {k::masked_fill_(tensor_arg(a, 0), tensor_arg(a, 1), scalar_arg(a, 2))};
  });
  impl_both(m, "masked_fill_.Tensor", [](OpContext&, Args a) -> Results {
    return {k::masked_fill_(tensor_arg(a, 0), tensor_arg(a, 1), tensor_arg(a, 2))};
  });
  m.def("triu(Tensor self, int diagonal=0) -> Tensor");
  m.def("tril(Tensor self, int diagonal=0) -> Tensor");
  impl_both(m, "triu", [](OpContext&, Args a) -> Results { return {k::triu(tensor_arg(a, 0), a[1].to_int())}; });
  impl_both(m, "tril", [](OpContext&, Args a) -> Results { return {k::tril(tensor_arg(a, 0), a[1].to_int())}; });
}

}  // namespace

SYMMFLOW_LIBRARY_FRAGMENT(aten, m) {
  register_softmax(m);
  register_layer_norm(m);
  register_embedding(m);
  register_indexing(m);
  register_losses(m);
  register_masks(m);
}

}  // namespace symmflow::ops
