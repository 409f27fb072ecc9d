// Losses as make_fx records them: nll_loss_forward (F.cross_entropy is
// _log_softmax + nll_loss_forward) and mse_loss.
//
//   Tensor logp = log_softmax(logits, -1);                    // f32[N, C]
//   auto [loss, total_weight] = nll_loss_forward(logp, target, std::nullopt, kMean, -100);
//
// reduction: 0 none, 1 mean, 2 sum (PyTorch's Reduction enum).
//
// nll_loss_forward(self, target, weight, reduction, ignore_index): self is [N, C]
// or [C] (f32, f64, bf16; f16 too, as PyTorch 2.x), target i64 [N] (or [] for a
// [C] self), weight a [C] tensor of self's dtype or none. Each loss is
// -weight[t] * self[n, t]; a target equal to ignore_index counts 0 with weight 0,
// any other target outside [0, C) is an error when the op runs ("Target 5 is out
// of bounds."). total_weight is the sum of the weights of the counted targets;
// mean divides by it (NaN when nothing counts). With reduction none a [N, C] self
// gives [N] losses and total_weight 0; a [C] self gives its one loss, undivided,
// and its weight (PyTorch 1.13). Sums are taken in double, rounded once.
//
// mse_loss(self, target, reduction): (self - target)^2, broadcast and promoted as
// sub, then none / mean / sum; floating dtypes only ("mse_cpu" not implemented
// for 'Long'). On meta inputs the results are meta.
#pragma once
#include <optional>
#include <utility>

#include "symmflow/core/tensor.h"

namespace symmflow::kernels {

std::pair<Tensor, Tensor> nll_loss_forward(const Tensor& self, const Tensor& target,
                                           const std::optional<Tensor>& weight, int64_t reduction,
                                           int64_t ignore_index);
Tensor mse_loss(const Tensor& self, const Tensor& target, int64_t reduction = 1);

}  // namespace symmflow::kernels
