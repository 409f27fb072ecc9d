"""symmflow: a compiler and runtime for distributed tensor programs.

The PyTorch API is ``symmflow.torch`` (docs/python.md)::

    import symmflow.torch as sft
    sft.init()
    fast = sft.compile(fn)

``symmflow._C`` is the C++ core (pybind11); nothing in it is needed directly.
"""
from . import _C

Error = _C.Error  # every error symmflow's C++ core raises (a RuntimeError)

__all__ = ["Error"]
