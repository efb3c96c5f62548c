"""count_outside against a plain Python count, for every label dtype it takes."""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from torchtally.functional._checks import count_outside


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(st.integers(-300, 300), max_size=40),
    low=st.integers(-5, 5),
    width=st.integers(1, 400),
    dtype=st.sampled_from([torch.int64, torch.int32, torch.int16, torch.float32]),
)
def test_count_outside_matches_python(values: list[int], low: int, width: int, dtype) -> None:
    high = low + width
    expected = sum(not (low <= v < high) for v in values)
    got = count_outside(torch.tensor(values, dtype=dtype), low, high)
    assert got.dtype == torch.int64 and got.dim() == 0
    assert int(got) == expected


def test_count_outside_ignores_nan_in_float_values() -> None:
    # NaN is neither below low nor at/above high (value checks count it as non-finite instead)
    values = torch.tensor([float("nan"), -1.0, 0.0, 3.0])
    assert int(count_outside(values, 0, 3)) == 2
