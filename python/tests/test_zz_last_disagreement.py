"""Ranks that disagree on a collective: an exception on every rank, never a hang.
Runs last (the file name sorts last): a disagreement leaves the group's sequence
numbers apart, so nothing may communicate after it."""
import pytest
import torch

import symmflow.torch as sft


def test_ranks_disagreeing_on_a_collective_shape_raise_on_every_rank(rank, world):
    if world == 1:
        pytest.skip("needs two ranks")
    with pytest.raises(sft.Error, match=r"test_zz_last_disagreement.py:\d+.*ranks disagree"):
        sft.all_reduce_(torch.ones(4 + rank))


def test_an_unmatched_send_in_a_compiled_function_fails_on_every_rank_naming_the_line(rank, world):
    if world == 1:
        pytest.skip("needs two ranks")

    def f(x):
        if sft.rank() == 0:  # rank 0 sends 8 bytes nobody receives: small enough to pass eagerly
            sft.isend(x, 1, tag=7).wait()
        return x + 1

    with pytest.raises(sft.Error, match=r"does not match.*test_zz_last_disagreement.py:\d+"):
        sft.compile(f)(torch.ones(2))
