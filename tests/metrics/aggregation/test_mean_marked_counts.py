"""MeanMetric with a Python weight counts the non-finite values of a large eager CPU float32
batch from its float64 block sums (finite marks written over them in the block copies): the
count equals numpy's, for NaN and ±inf anywhere, over many blocks and next to the largest
finite float32 values; a clean batch gives numpy's float64 mean."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from torchtally.functional.aggregation import _mean
from torchtally.functional.aggregation._mean import mean_update, scalar_weight_sum_checked
from torchtally.metrics import MeanMetric, MetricValueError

FLOAT32_MAX = torch.finfo(torch.float32).max
BAD = (float("nan"), float("inf"), float("-inf"))


def _extreme(size: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    values = ((torch.rand(size, generator=g, dtype=torch.float64) * 2 - 1) * FLOAT32_MAX).float()
    values[:3] = torch.tensor([FLOAT32_MAX, FLOAT32_MAX, -FLOAT32_MAX])
    return values


@settings(max_examples=40, deadline=None)
@given(
    size=st.integers(2000, 4000),
    bad=st.lists(st.tuples(st.integers(0, 3999), st.sampled_from(BAD)), max_size=12),
    weight=st.sampled_from([1.0, 0.5, 3]),
    seed=st.integers(0, 2**16),
)
def test_counts_match_numpy_anywhere(
    size: int, bad: list[tuple[int, float]], weight: float, seed: int
) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_mean, "_BLOCK_FROM", 2000)  # blocks of 700: many, and a ragged last
        patch.setattr(_mean, "_BLOCK", 700)
        values = _extreme(size, seed)
        for index, value in bad:
            values[index % size] = value
        total, weight_total, count = scalar_weight_sum_checked(values, weight)
    assert count is not None and count.dtype == torch.int64
    assert int(count) == int((~np.isfinite(values.numpy())).sum())
    assert weight_total == size * weight
    if int(count) == 0:
        expected = values.double().numpy().sum() * weight
        assert float(total) == pytest.approx(expected, rel=1e-12, abs=1e-12 * size * 3.5e38)


@pytest.mark.parametrize("size", [(1 << 17) + 3, 300_001])
def test_the_metric_raises_with_the_count_at_the_default_block_size(size: int) -> None:
    values = _extreme(size, 1) / 1e30
    clean = MeanMetric()
    clean.update(values)
    expected = values.double().numpy().mean()
    assert float(clean.compute()) == pytest.approx(expected, rel=1e-6, abs=1e-12)
    g = torch.Generator().manual_seed(2)
    picks = torch.randperm(size, generator=g)
    values[picks[:700]] = float("nan")
    values[picks[700:1000]] = float("-inf")
    values[picks[1000:1001]] = float("inf")
    metric = MeanMetric()
    metric.update(values, 2.0)
    with pytest.raises(MetricValueError, match=r"non-finite values \(1001 values\)"):
        metric.compute()


@pytest.mark.parametrize("weight", [1.0, 0.25])
def test_a_large_float32_sum_in_blocks_is_numpys_float64_sum(weight: float) -> None:
    """Without the checks too, a large eager CPU float32 batch is summed in float64 blocks:
    numpy's float64 sum, to a float64 sum's rounding, the extremes of issue 25 included."""
    values = _extreme(300_001, 3)
    values[:4096] = 1e35  # 4096 of them overflow a float32 sum
    expected = values.double().numpy().sum() * weight

    total, count = mean_update(values, weight)
    assert float(count) == 300_001 * weight
    assert float(total) == pytest.approx(expected, rel=1e-12, abs=1e-12 * 300_001 * 3.5e38)
    unchecked = MeanMetric(check_values=False)
    unchecked.update(values, weight)
    assert float(unchecked.weighted_sum) == float(total)
