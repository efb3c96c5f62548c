"""count_outside and count_nonfinite against plain Python counts, for every dtype they take."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from torchtally.functional._checks import count_nonfinite, count_outside


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


@settings(max_examples=30, deadline=None)
@given(
    size=st.sampled_from([1, 100, 4095, 4096, 5000, 20000]),
    bad=st.lists(st.tuples(st.integers(0, 19999), st.sampled_from(["nan", "inf", "-inf"]))),
    dtype=st.sampled_from([torch.float64, torch.float32, torch.float16, torch.bfloat16]),
)
def test_count_nonfinite_matches_python(size: int, bad: list[tuple[int, str]], dtype) -> None:
    values = torch.linspace(-3.0, 3.0, size, dtype=torch.float64)
    values[size // 2] = -0.0  # -0.0 - -0.0 is +0.0: finite
    for index, text in bad:
        values[index % size] = float(text)
    expected = sum(not math.isfinite(v) for v in values.tolist())
    got = count_nonfinite(values.to(dtype))
    assert got is not None and int(got) == expected


def test_count_nonfinite_of_integers_is_none() -> None:
    assert count_nonfinite(torch.arange(5)) is None


@pytest.mark.slow
def test_large_batch_paths_stay_traceable() -> None:
    # 8192 elements take the integer-view count (and the float32 mean sum): still no host sync
    from torchtally.metrics import AccuracyMetric, MeanMetric, MSEMetric
    from torchtally.testing import assert_traceable

    g = torch.Generator().manual_seed(0)
    assert_traceable(MeanMetric(), torch.randn(8192, generator=g))
    assert_traceable(MSEMetric(), torch.randn(8192, generator=g), torch.randn(8192, generator=g))
    labels = torch.randint(0, 10, (8192,), generator=g)
    assert_traceable(AccuracyMetric(), labels, torch.randn(8192, 10, generator=g))
