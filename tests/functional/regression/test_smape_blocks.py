"""The SMAPE sum of a large eager CPU batch, worked in blocks through reused float64 buffers,
against a float64 NumPy sum of the same ratios (math.fsum: correctly rounded), for every
convention: zero pairs scored 0 or NaN, an `epsilon` floor, non-finite inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from torchtally.functional.regression import smape_sum
from torchtally.functional.regression._errors import _SMAPE_BLOCK_FROM

_SPECIALS = (0.0, -0.0, 1e-40, -3e38, 3e38, math.inf, -math.inf, math.nan)


def _oracle(
    labels: np.ndarray, predictions: np.ndarray, epsilon: float | None, zero: bool
) -> float:
    y, p = labels.astype(np.float64).ravel(), predictions.astype(np.float64).ravel()
    with np.errstate(divide="ignore", invalid="ignore"):
        denominator = np.abs(p) + np.abs(y)
        if epsilon is not None:
            denominator = np.maximum(denominator, epsilon)  # NaN propagates, as clamp
        ratio = np.abs(p - y) / denominator
        if epsilon is None and zero:
            ratio = np.where((p == 0) & (y == 0), 0.0, ratio)
    if np.isnan(ratio).any():
        return math.nan
    return math.fsum(ratio.tolist())


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    extra=st.integers(0, 3 * 65536),
    dtype=st.sampled_from([torch.float32, torch.float64, torch.float16]),
    two_dims=st.booleans(),
    epsilon=st.sampled_from([None, 1e-6]),
    zero=st.booleans(),
    specials=st.lists(st.tuples(st.integers(0, 10**9), st.sampled_from(_SPECIALS)), max_size=4),
)
def test_blocked_smape_sum_is_the_float64_sum_of_the_ratios(
    seed: int,
    extra: int,
    dtype: torch.dtype,
    two_dims: bool,
    epsilon: float | None,
    zero: bool,
    specials: list[tuple[int, float]],
) -> None:
    n = _SMAPE_BLOCK_FROM + extra - extra % 2
    g = torch.Generator().manual_seed(seed)
    labels = torch.randn(n, generator=g) * 10.0 ** torch.randint(-3, 4, (n,), generator=g)
    predictions = labels + torch.randn(n, generator=g)
    both_zero = torch.rand(n, generator=g) < 0.01
    labels[both_zero], predictions[both_zero] = 0.0, 0.0
    for position, value in specials:
        (labels if position % 2 else predictions)[position % n] = value
    labels, predictions = labels.to(dtype), predictions.to(dtype)
    if two_dims:
        labels, predictions = labels.view(2, -1), predictions.view(2, -1)
    got = float(smape_sum(labels, predictions, epsilon, zero_pairs="zero" if zero else "nan"))
    expected = _oracle(labels.numpy(), predictions.numpy(), epsilon, zero)
    if math.isnan(expected):
        assert math.isnan(got)
    else:
        assert got == pytest.approx(expected, rel=1e-12, abs=1e-300)


def test_smape_sums_large_batches_in_blocks_of_reused_buffers() -> None:
    # The blocked form allocates nothing per call after the first (the thread's float64
    # buffers), where the whole-batch form makes eight batch-sized float64 temporaries.
    g = torch.Generator().manual_seed(0)
    labels, predictions = torch.rand(1 << 18, generator=g), torch.rand(1 << 18, generator=g)
    smape_sum(labels, predictions)
    with torch.profiler.profile(profile_memory=True) as prof:
        smape_sum(labels, predictions)
    allocated = sum(max(e.cpu_memory_usage, 0) for e in prof.key_averages())
    assert allocated < 1024, allocated


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("flush_denormal", [False, True])
def test_blocked_smape_sum_scores_zero_pairs_as_the_whole_batch_form(
    flush_denormal: bool, dtype: torch.dtype
) -> None:
    # A zero denominator (p = y = 0) counts 0 whatever the CPU's denormal mode: a bound at the
    # smallest subnormal would read as 0 with flushing on, and 0 / 0 would make the sum NaN.
    labels, predictions = torch.zeros(_SMAPE_BLOCK_FROM * 3), torch.zeros(_SMAPE_BLOCK_FROM * 3)
    predictions[::7] = 1.0
    labels[1::7] = torch.finfo(torch.float32).tiny  # float32 normals, float64 copies too
    labels, predictions = labels.to(dtype), predictions.to(dtype)
    torch.set_flush_denormal(flush_denormal)
    try:
        got = float(smape_sum(labels, predictions))
    finally:
        torch.set_flush_denormal(False)  # torch's default
    assert got == _oracle(labels.numpy(), predictions.numpy(), None, zero=True)
