// aten:: views, reductions (max/min with indices, var/std too), softmax, matmul, factories, cat/stack with PyTorch's
// schemas. Views return `Tensor(a)`: the result aliases self's storage.
#include "symmflow/kernels/copy.h"
#include "symmflow/kernels/factories.h"
#include "symmflow/kernels/matmul.h"
#include "symmflow/kernels/reduce.h"
#include "symmflow/kernels/shape_ops.h"
#include "symmflow/kernels/softmax.h"
#include "symmflow/kernels/views.h"
#include "symmflow/ops/boxing.h"

namespace symmflow::ops {
namespace k = symmflow::kernels;

namespace {

void register_views(Library& m) {
  m.def("view(Tensor(a) self, SymInt[] size) -> Tensor(a)");
  m.def("reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)");
  m.def("slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)");
  m.def("select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)");
  m.def("narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)");
  m.def("transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)");
  m.def("t(Tensor(a) self) -> Tensor(a)");
  m.def("permute(Tensor(a) self, int[] dims) -> Tensor(a)");
  m.def("expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)");
  m.def("unsqueeze(Tensor(a) self, int dim) -> Tensor(a)");
  m.def("squeeze(Tensor(a) self) -> Tensor(a)");
  m.def("squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)");
  m.def("flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)");
  m.def("alias(Tensor(a) self) -> Tensor(a)");
  m.def("as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a)");
  // What make_fx records for reshape (a view with the strides it computed) and detach.
  m.def("_reshape_alias(Tensor(a) self, SymInt[] size, SymInt[] stride) -> Tensor(a)");
  m.def("detach(Tensor(a) self) -> Tensor(a)");
  m.def("split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]");
  m.def("split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]");
  m.def("chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]");
  m.def("unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]");
  impl_both(m, "unbind.int", [](OpContext&, Args a) -> Results { return {k::unbind(tensor_arg(a, 0), a[1].to_int())}; });
  impl_both(m, "_reshape_alias", [](OpContext&, Args a) -> Results {
    return {k::as_strided(tensor_arg(a, 0), int_list_arg(a, 1), int_list_arg(a, 2))};
  });
  impl_both(m, "detach", [](OpContext&, Args a) -> Results { return {k::alias(tensor_arg(a, 0))}; });
  impl_both(m, "split.Tensor", [](OpContext&, Args a) -> Results {
    return {k::split(tensor_arg(a, 0), a[1].to_int(), a[2].to_int())};
  });
  impl_both(m, "split_with_sizes", [](OpContext&, Args a) -> Results {
    return {k::split_with_sizes(tensor_arg(a, 0), int_list_arg(a, 1), a[2].to_int())};
  });
  impl_both(m, "chunk", [](OpContext&, Args a) -> Results {
    return {k::chunk(tensor_arg(a, 0), a[1].to_int(), a[2].to_int())};
  });
  // PyTorch's _unsafe_view shares self's storage, but its schema declares a fresh
  // result, and the compiler plans buffers by schema (a hidden alias would let the
  // planner reuse self's buffer under it). So it is view()'s check and result,
  // copied: same values and errors, own storage.
  m.def("_unsafe_view(Tensor self, SymInt[] size) -> Tensor");
  impl_both(m, "_unsafe_view", [](OpContext&, Args a) -> Results {
    return {k::clone(k::view(tensor_arg(a, 0), int_list_arg(a, 1)))};
  });
  impl_both(m, "view", [](OpContext&, Args a) -> Results { return {k::view(tensor_arg(a, 0), int_list_arg(a, 1))}; });
  impl_both(m, "reshape", [](OpContext&, Args a) -> Results { return {k::reshape(tensor_arg(a, 0), int_list_arg(a, 1))}; });
  impl_both(m, "slice.Tensor", [](OpContext&, Args a) -> Results {
    return {k::slice(tensor_arg(a, 0), a[1].to_int(), opt_int_arg(a, 2), opt_int_arg(a, 3), a[4].to_int())};
  });
  impl_both(m, "select.int", [](OpContext&, Args a) -> Results { return {k::select(tensor_arg(a, 0), a[1].to_int(), a[2].to_int())}; });
  impl_both(m, "narrow", [](OpContext&, Args a) -> Results { return {k::narrow(tensor_arg(a, 0), a[1].to_int(), a[2].to_int(), a[3].to_int())}; });
  impl_both(m, "transpose.int", [](OpContext&, Args a) -> Results { return {k::transpose(tensor_arg(a, 0), a[1].to_int(), a[2].to_int())}; });
  impl_both(m, "t", [](OpContext&, Args a) -> Results { return {k::t(tensor_arg(a, 0))}; });
  impl_both(m, "permute", [](OpContext&, Args a) -> Results { return {k::permute(tensor_arg(a, 0), int_list_arg(a, 1))}; });
  impl_both(m, "expand", [](OpContext&, Args a) -> Results { return {k::expand(tensor_arg(a, 0), int_list_arg(a, 1))}; });
  impl_both(m, "unsqueeze", [](OpContext&, Args a) -> Results { return {k::unsqueeze(tensor_arg(a, 0), a[1].to_int())}; });
  impl_both(m, "squeeze", [](OpContext&, Args a) -> Results { return {k::squeeze(tensor_arg(a, 0))}; });
  impl_both(m, "squeeze.dim", [](OpContext&, Args a) -> Results { return {k::squeeze(tensor_arg(a, 0), a[1].to_int())}; });
  impl_both(m, "flatten.using_ints", [](OpContext&, Args a) -> Results { return {k::flatten(tensor_arg(a, 0), a[1].to_int(), a[2].to_int())}; });
  impl_both(m, "alias", [](OpContext&, Args a) -> Results { return {k::alias(tensor_arg(a, 0))}; });
  // The write-back of a mutation through a view (functionalization): a copy of
  // self, in self's layout, with src written where self.as_strided(size, stride,
  // storage_offset) looks (the offset counts from self's storage start).
  m.def("as_strided_scatter(Tensor self, Tensor src, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor");
  impl_both(m, "as_strided_scatter", [](OpContext&, Args a) -> Results {
    const Tensor& self = tensor_arg(a, 0);
    const Tensor& src = tensor_arg(a, 1);
    SF_CHECK(src.sizes() == int_list_arg(a, 2),
             "aten::as_strided_scatter: expected src of size [{}], got {}",
             fmt::join(int_list_arg(a, 2), ", "), src.type_string());
    // The window must fit self's storage (PyTorch's setStorage check), meta too.
    const Shape size = int_list_arg(a, 2), stride = int_list_arg(a, 3);
    const int64_t off = opt_int_arg(a, 4).value_or(self.storage_offset());
    const int64_t need = storage_extent(size, stride, off);
    const int64_t have = self.numel() == 0 ? self.storage_offset()
                                           : storage_extent(self.sizes(), self.strides(), self.storage_offset());
    SF_CHECK(need <= have,
             "aten::as_strided_scatter: setStorage: sizes [{}], strides [{}], storage offset {}, and itemsize {} "
             "requiring a storage size of {} are out of bounds for storage of size {}",
             fmt::join(size, ", "), fmt::join(stride, ", "), off, self.itemsize(), need * int64_t(self.itemsize()),
             have * int64_t(self.itemsize()));
    Tensor out = k::clone_layout(self);
    k::copy_(k::as_strided(out, size, stride, off), src);
    return {out};
  });
  impl_both(m, "as_strided", [](OpContext&, Args a) -> Results {
    return {k::as_strided(tensor_arg(a, 0), int_list_arg(a, 1), int_list_arg(a, 2), opt_int_arg(a, 3))};
  });
}

void register_reductions(Library& m) {
  m.def("sum(Tensor self, *, ScalarType? dtype=None) -> Tensor");
  m.def("sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor");
  m.def("mean(Tensor self, *, ScalarType? dtype=None) -> Tensor");
  m.def("mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor");
  m.def("amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor");
  m.def("amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor");
  m.def("softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor");
  m.def("log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor");
  impl_both(m, "sum", [](OpContext&, Args a) -> Results { return {k::sum(tensor_arg(a, 0), {}, false, opt_dtype_arg(a, 1))}; });
  impl_both(m, "sum.dim_IntList", [](OpContext&, Args a) -> Results {
    return {k::sum(tensor_arg(a, 0), int_list_arg(a, 1), a[2].to_bool(), opt_dtype_arg(a, 3))};
  });
  impl_both(m, "mean", [](OpContext&, Args a) -> Results { return {k::mean(tensor_arg(a, 0), {}, false, opt_dtype_arg(a, 1))}; });
  impl_both(m, "mean.dim", [](OpContext&, Args a) -> Results {
    return {k::mean(tensor_arg(a, 0), int_list_arg(a, 1), a[2].to_bool(), opt_dtype_arg(a, 3))};
  });
  impl_both(m, "amax", [](OpContext&, Args a) -> Results { return {k::amax(tensor_arg(a, 0), int_list_arg(a, 1), a[2].to_bool())}; });
  impl_both(m, "amin", [](OpContext&, Args a) -> Results { return {k::amin(tensor_arg(a, 0), int_list_arg(a, 1), a[2].to_bool())}; });
  // x.max(-1) / x.min(-1): values and the index of each; argmax/argmin.
  m.def("max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)");
  m.def("min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)");
  m.def("topk(Tensor self, int k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)");
  impl_both(m, "topk", [](OpContext&, Args a) -> Results {
    auto r = k::topk(tensor_arg(a, 0), a[1].to_int(), a[2].to_int(), a[3].to_bool());
    return {r.values, r.indices};
  });
  m.def("argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor");
  m.def("argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor");
  impl_both(m, "max.dim", [](OpContext&, Args a) -> Results {
    auto r = k::max_dim(tensor_arg(a, 0), a[1].to_int(), a[2].to_bool());
    return {r.values, r.indices};
  });
  impl_both(m, "min.dim", [](OpContext&, Args a) -> Results {
    auto r = k::min_dim(tensor_arg(a, 0), a[1].to_int(), a[2].to_bool());
    return {r.values, r.indices};
  });
  impl_both(m, "argmax", [](OpContext&, Args a) -> Results {
    return {k::argmax(tensor_arg(a, 0), opt_int_arg(a, 1), a[2].to_bool())};
  });
  impl_both(m, "argmin", [](OpContext&, Args a) -> Results {
    return {k::argmin(tensor_arg(a, 0), opt_int_arg(a, 1), a[2].to_bool())};
  });
  // x.var(-1), x.std(), torch.var_mean(x, -1): make_fx records the correction
  // overloads (correction has no default there: PyTorch's schema).
  m.def("var.correction(Tensor self, int[1]? dim, *, int? correction, bool keepdim=False) -> Tensor");
  m.def("std.correction(Tensor self, int[1]? dim, *, int? correction, bool keepdim=False) -> Tensor");
  m.def("var_mean.correction(Tensor self, int[1]? dim, *, int? correction, bool keepdim=False) -> (Tensor, Tensor)");
  m.def("std_mean.correction(Tensor self, int[1]? dim, *, int? correction, bool keepdim=False) -> (Tensor, Tensor)");
  impl_both(m, "var.correction", [](OpContext&, Args a) -> Results {
    return {k::var(tensor_arg(a, 0), int_list_arg(a, 1), opt_int_arg(a, 2), a[3].to_bool())};
  });
  impl_both(m, "std.correction", [](OpContext&, Args a) -> Results {
    return {k::std_dev(tensor_arg(a, 0), int_list_arg(a, 1), opt_int_arg(a, 2), a[3].to_bool())};
  });
  impl_both(m, "var_mean.correction", [](OpContext&, Args a) -> Results {
    auto [v, mean] = k::var_mean(tensor_arg(a, 0), int_list_arg(a, 1), opt_int_arg(a, 2), a[3].to_bool());
    return {v, mean};
  });
  impl_both(m, "std_mean.correction", [](OpContext&, Args a) -> Results {
    auto [sd, mean] = k::std_mean(tensor_arg(a, 0), int_list_arg(a, 1), opt_int_arg(a, 2), a[3].to_bool());
    return {sd, mean};
  });
  m.def("norm.ScalarOpt_dim(Tensor self, Scalar? p, int[1] dim, bool keepdim=False) -> Tensor");
  impl_both(m, "norm.ScalarOpt_dim", [](OpContext&, Args a) -> Results {
    const std::optional<Scalar> p = opt_scalar_arg(a, 1);
    return {k::norm(tensor_arg(a, 0), p ? std::optional<double>(p->to_double()) : std::nullopt, int_list_arg(a, 2),
                    a[3].to_bool())};
  });
  // x.max() / x.min(): amax/amin over every dim; any/all; logsumexp.
  m.def("max(Tensor self) -> Tensor");
  m.def("min(Tensor self) -> Tensor");
  impl_both(m, "max", [](OpContext&, Args a) -> Results { return {k::amax(tensor_arg(a, 0))}; });
  impl_both(m, "min", [](OpContext&, Args a) -> Results { return {k::amin(tensor_arg(a, 0))}; });
  m.def("any(Tensor self) -> Tensor");
  m.def("any.dim(Tensor self, int dim, bool keepdim=False) -> Tensor");
  m.def("all(Tensor self) -> Tensor");
  m.def("all.dim(Tensor self, int dim, bool keepdim=False) -> Tensor");
  impl_both(m, "any", [](OpContext&, Args a) -> Results { return {k::any(tensor_arg(a, 0))}; });
  impl_both(m, "any.dim", [](OpContext&, Args a) -> Results {
    return {k::any(tensor_arg(a, 0), {a[1].to_int()}, a[2].to_bool())};
  });
  impl_both(m, "all", [](OpContext&, Args a) -> Results { return {k::all(tensor_arg(a, 0))}; });
  impl_both(m, "all.dim", [](OpContext&, Args a) -> Results {
    return {k::all(tensor_arg(a, 0), {a[1].to_int()}, a[2].to_bool())};
  });
  m.def("logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor");
  impl_both(m, "logsumexp", [](OpContext&, Args a) -> Results {
    return {k::logsumexp(tensor_arg(a, 0), int_list_arg(a, 1), a[2].to_bool())};
  });
  m.def("cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor");
  impl_both(m, "cumsum", [](OpContext&, Args a) -> Results {
    return {k::cumsum(tensor_arg(a, 0), a[1].to_int(), opt_dtype_arg(a, 2))};
  });
  impl_both(m, "softmax.int", [](OpContext&, Args a) -> Results { return {k::softmax(tensor_arg(a, 0), a[1].to_int(), opt_dtype_arg(a, 2))}; });
  impl_both(m, "log_softmax.int", [](OpContext&, Args a) -> Results { return {k::log_softmax(tensor_arg(a, 0), a[1].to_int(), opt_dtype_arg(a, 2))}; });
}

void register_matmul(Library& m) {
  m.def("mm(Tensor self, Tensor mat2) -> Tensor");
  m.def("bmm(Tensor self, Tensor mat2) -> Tensor");
  m.def("matmul(Tensor self, Tensor other) -> Tensor");
  m.def("addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor");
  m.def("linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor");
  m.def("baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor");
  impl_both(m, "baddbmm", [](OpContext&, Args a) -> Results {
    return {k::baddbmm(tensor_arg(a, 0), tensor_arg(a, 1), tensor_arg(a, 2), scalar_arg(a, 3), scalar_arg(a, 4))};
  });
  impl_both(m, "mm", [](OpContext&, Args a) -> Results { return {k::mm(tensor_arg(a, 0), tensor_arg(a, 1))}; });
  impl_both(m, "bmm", [](OpContext&, Args a) -> Results { return {k::bmm(tensor_arg(a, 0), tensor_arg(a, 1))}; });
  impl_both(m, "matmul", [](OpContext&, Args a) -> Results { return {k::matmul(tensor_arg(a, 0), tensor_arg(a, 1))}; });
  impl_both(m, "addmm", [](OpContext&, Args a) -> Results {
    return {k::addmm(tensor_arg(a, 0), tensor_arg(a, 1), tensor_arg(a, 2), scalar_arg(a, 3), scalar_arg(a, 4))};
  });
  impl_both(m, "linear", [](OpContext&, Args a) -> Results {
    return {k::linear(tensor_arg(a, 0), tensor_arg(a, 1), a[2].to_optional_tensor())};
  });
}

void register_shape_ops(Library& m) {
  m.def("cat(Tensor[] tensors, int dim=0) -> Tensor");
  m.def("stack(Tensor[] tensors, int dim=0) -> Tensor");
  m.def("constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor");
  impl_both(m, "constant_pad_nd", [](OpContext&, Args a) -> Results {
    return {k::constant_pad_nd(tensor_arg(a, 0), int_list_arg(a, 1), scalar_arg(a, 2))};
  });
  m.def("repeat(Tensor self, SymInt[] repeats) -> Tensor");
  m.def("flip(Tensor self, int[] dims) -> Tensor");
  m.def("roll(Tensor self, int[1] shifts, int[1] dims=[]) -> Tensor");
  impl_both(m, "repeat", [](OpContext&, Args a) -> Results { return {k::repeat(tensor_arg(a, 0), int_list_arg(a, 1))}; });
  impl_both(m, "flip", [](OpContext&, Args a) -> Results { return {k::flip(tensor_arg(a, 0), int_list_arg(a, 1))}; });
  impl_both(m, "roll", [](OpContext&, Args a) -> Results {
    return {k::roll(tensor_arg(a, 0), int_list_arg(a, 1), int_list_arg(a, 2))};
  });
  impl_both(m, "cat", [](OpContext&, Args a) -> Results { return {k::cat(a[0].to_tensor_list(), a[1].to_int())}; });
  impl_both(m, "stack", [](OpContext&, Args a) -> Results { return {k::stack(a[0].to_tensor_list(), a[1].to_int())}; });
}

// Factories have no tensor input to say "meta", so the key decides.
void register_factories(Library& m) {
  constexpr const char* kOpts = "Layout? layout=None, Device? device=None, bool? pin_memory=None";
  m.def(fmt::format("empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, {}, MemoryFormat? memory_format=None) -> Tensor", kOpts));
  m.def(fmt::format("zeros(SymInt[] size, *, ScalarType? dtype=None, {}) -> Tensor", kOpts));
  m.def(fmt::format("ones(SymInt[] size, *, ScalarType? dtype=None, {}) -> Tensor", kOpts));
  m.def(fmt::format("full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, {}) -> Tensor", kOpts));
  m.def(fmt::format("arange(Scalar end, *, ScalarType? dtype=None, {}) -> Tensor", kOpts));
  m.def(fmt::format("arange.start(Scalar start, Scalar end, *, ScalarType? dtype=None, {}) -> Tensor", kOpts));
  m.def(fmt::format("arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, {}) -> Tensor", kOpts));
  // symmflow's generator is counter-based: element i depends only on (seed, i),
  // so every rank and every mode draws the same numbers. The seed is explicit.
  m.def(fmt::format("randn(SymInt[] size, *, int seed=0, ScalarType? dtype=None, {}) -> Tensor", kOpts));
  m.def(fmt::format("rand(SymInt[] size, *, int seed=0, ScalarType? dtype=None, {}) -> Tensor", kOpts));
  for (DispatchKey key : {DispatchKey::CPU, DispatchKey::Meta}) {
    const bool meta = key == DispatchKey::Meta;
    auto dt = [](Args a, size_t i) { return opt_dtype_arg(a, i).value_or(DType::f32); };
    m.impl("empty.memory_format", [=](OpContext&, Args a) -> Results { return {k::empty(int_list_arg(a, 0), dt(a, 1), meta)}; }, key);
    m.impl("zeros", [=](OpContext&, Args a) -> Results { return {k::zeros(int_list_arg(a, 0), dt(a, 1), meta)}; }, key);
    m.impl("ones", [=](OpContext&, Args a) -> Results { return {k::ones(int_list_arg(a, 0), dt(a, 1), meta)}; }, key);
    m.impl("full", [=](OpContext&, Args a) -> Results {
      return {k::full(int_list_arg(a, 0), scalar_arg(a, 1), opt_dtype_arg(a, 2), meta)};
    }, key);
    m.impl("arange", [=](OpContext&, Args a) -> Results { return {k::arange(scalar_arg(a, 0), opt_dtype_arg(a, 1), meta)}; }, key);
    m.impl("arange.start", [=](OpContext&, Args a) -> Results {
      return {k::arange(scalar_arg(a, 0), scalar_arg(a, 1), Scalar(int64_t(1)), opt_dtype_arg(a, 2), meta)};
    }, key);
    m.impl("arange.start_step", [=](OpContext&, Args a) -> Results {
      return {k::arange(scalar_arg(a, 0), scalar_arg(a, 1), scalar_arg(a, 2), opt_dtype_arg(a, 3), meta)};
    }, key);
    m.impl("randn", [=](OpContext&, Args a) -> Results {
      return {k::randn(int_list_arg(a, 0), dt(a, 2), uint64_t(a[1].to_int()), meta)};
    }, key);
    m.impl("rand", [=](OpContext&, Args a) -> Results {
      return {k::rand(int_list_arg(a, 0), dt(a, 2), uint64_t(a[1].to_int()), meta)};
    }, key);
  }
  // *_like (make_fx emits them for torch.zeros_like(x) ...): PyTorch's schemas;
  // the result has self's sizes, is contiguous, and is meta when self is.
  const std::string like = fmt::format("ScalarType? dtype=None, {}, MemoryFormat? memory_format=None", kOpts);
  m.def(fmt::format("zeros_like(Tensor self, *, {}) -> Tensor", like));
  m.def(fmt::format("ones_like(Tensor self, *, {}) -> Tensor", like));
  m.def(fmt::format("empty_like(Tensor self, *, {}) -> Tensor", like));
  m.def(fmt::format("full_like(Tensor self, Scalar fill_value, *, {}) -> Tensor", like));
  auto like_dt = [](Args a, size_t i) { return opt_dtype_arg(a, i).value_or(tensor_arg(a, 0).dtype()); };
  impl_both(m, "zeros_like", [=](OpContext&, Args a) -> Results {
    return {k::zeros(tensor_arg(a, 0).sizes(), like_dt(a, 1), tensor_arg(a, 0).is_meta())};
  });
  impl_both(m, "ones_like", [=](OpContext&, Args a) -> Results {
    return {k::ones(tensor_arg(a, 0).sizes(), like_dt(a, 1), tensor_arg(a, 0).is_meta())};
  });
  impl_both(m, "empty_like", [=](OpContext&, Args a) -> Results {
    return {k::empty(tensor_arg(a, 0).sizes(), like_dt(a, 1), tensor_arg(a, 0).is_meta())};
  });
  impl_both(m, "full_like", [=](OpContext&, Args a) -> Results {
    return {k::full(tensor_arg(a, 0).sizes(), scalar_arg(a, 1), like_dt(a, 2), tensor_arg(a, 0).is_meta())};
  });
  // new_* (x.new_zeros(3) ...): a size of their own, self's dtype unless given.
  m.def(fmt::format("new_zeros(Tensor self, SymInt[] size, *, ScalarType? dtype=None, {}) -> Tensor", kOpts));
  m.def(fmt::format("new_ones(Tensor self, SymInt[] size, *, ScalarType? dtype=None, {}) -> Tensor", kOpts));
  m.def(fmt::format("new_empty(Tensor self, SymInt[] size, *, ScalarType? dtype=None, {}) -> Tensor", kOpts));
  m.def(fmt::format("new_full(Tensor self, SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, {}) -> Tensor", kOpts));
  impl_both(m, "new_zeros", [=](OpContext&, Args a) -> Results {
    return {k::zeros(int_list_arg(a, 1), like_dt(a, 2), tensor_arg(a, 0).is_meta())};
  });
  impl_both(m, "new_ones", [=](OpContext&, Args a) -> Results {
    return {k::ones(int_list_arg(a, 1), like_dt(a, 2), tensor_arg(a, 0).is_meta())};
  });
  impl_both(m, "new_empty", [=](OpContext&, Args a) -> Results {
    return {k::empty(int_list_arg(a, 1), like_dt(a, 2), tensor_arg(a, 0).is_meta())};
  });
  impl_both(m, "new_full", [=](OpContext&, Args a) -> Results {
    return {k::full(int_list_arg(a, 1), scalar_arg(a, 2), like_dt(a, 3), tensor_arg(a, 0).is_meta())};
  });
}

}  // namespace

SYMMFLOW_LIBRARY(aten, m) {
  register_views(m);
  register_reductions(m);
  register_matmul(m);
  register_shape_ops(m);
  register_factories(m);
}

}  // namespace symmflow::ops
