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
