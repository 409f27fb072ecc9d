# The README's "From PyTorch" example: Megatron's tensor-parallel MLP, compiled.
#   PYTHONPATH=build/dev/python build/dev/symmflow launch --nproc 2 -- /usr/bin/python3 examples/torch/tp_mlp.py
import torch, torch.nn.functional as F
import symmflow.torch as sft

sft.init()
rank, world = sft.rank(), sft.world_size()
torch.manual_seed(0)                              # the same full weights on every rank
x, w1, w2 = torch.randn(8, 32), torch.randn(64, 32), torch.randn(32, 64)
h = 64 // world                                   # this rank's hidden units

def mlp(x, w1, w2):
    return sft.all_reduce_(F.gelu(x @ w1.t()) @ w2.t())   # partial sums, reduced in place

fast = sft.compile(mlp)                           # traced on the first call, then replayed
out = fast(x, w1[rank * h:(rank + 1) * h], w2[:, rank * h:(rank + 1) * h])
torch.testing.assert_close(out, F.gelu(x @ w1.t()) @ w2.t(), rtol=1e-4, atol=1e-4)
if rank == 0:
    print(fast.explain(x, w1[:h], w2[:, :h]).splitlines()[0])
