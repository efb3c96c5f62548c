"""`count_nonfinite` (with its nansum count of large eager CPU batches, issue 16) is exact: numpy's
isfinite is the oracle, for NaN and ±inf anywhere (vectorized lanes and tails), both float
widths, non-contiguous views, and the metrics report the same counts."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from torchtally.functional import _checks
from torchtally.functional._checks import count_nonfinite
from torchtally.metrics import MeanMetric, MetricValueError, MSEMetric, R2ScoreMetric


def _with_bad(
    size: int, dtype: torch.dtype, bad: int, seed: int, scale: float = 1e30
) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    values = (torch.randn(size, generator=g) * scale).to(dtype)
    picks = torch.randperm(size, generator=g)[:bad]
    kinds = [float("nan"), float("inf"), float("-inf")]
    for i, pick in enumerate(picks.tolist()):
        values[pick] = kinds[i % 3]
    return values


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("size", [(1 << 17) - 1, 1 << 17, (1 << 17) + 13, 300_001])
@pytest.mark.parametrize("bad", [0, 1, 7, 1000])
def test_count_matches_numpy(dtype: torch.dtype, size: int, bad: int) -> None:
    values = _with_bad(size, dtype, bad, seed=size + bad)
    got = count_nonfinite(values)
    assert got is not None and got.dtype == torch.int64 and got.shape == ()
    assert int(got) == int((~np.isfinite(values.numpy())).sum()) == bad


def test_non_contiguous_and_two_dimensional() -> None:
    values = _with_bad(600_000, torch.float32, 999, seed=3).reshape(1000, 600)
    for view in (values.t(), values[:, ::2], values):
        got = count_nonfinite(view)
        assert got is not None
        assert int(got) == int((~np.isfinite(view.numpy())).sum())


def test_integers_have_no_count_and_float32_past_exact_sums_takes_the_general_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert count_nonfinite(torch.arange(1 << 18)) is None
    monkeypatch.setattr(_checks, "_SUMMED_EXACTLY_UP_TO", 1 << 10)
    values = _with_bad(1 << 17, torch.float32, 5, seed=9)
    got = count_nonfinite(values)
    assert got is not None and int(got) == 5


def test_metrics_report_exact_counts_for_large_batches() -> None:
    labels = _with_bad(1 << 18, torch.float32, 3, seed=1)
    predictions = _with_bad(1 << 18, torch.float32, 5, seed=2)
    for metric in (MSEMetric(), R2ScoreMetric()):
        metric.update(labels, predictions)
        with pytest.raises(
            MetricValueError, match=r"non-finite labels \(3 values\); non-finite predictions \(5"
        ):
            metric.compute()
    mean = MeanMetric()
    mean.update(predictions)
    with pytest.raises(MetricValueError, match=r"non-finite values \(5 values\)"):
        mean.compute()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
@pytest.mark.parametrize("size", [1, 64, 4095, 4096, 70_000])
def test_small_and_mid_batches_match_numpy(dtype: torch.dtype, size: int) -> None:
    bad = min(size, 5)
    values = _with_bad(size, dtype, bad, seed=size, scale=100.0)
    got = count_nonfinite(values)
    assert got is not None and got.dtype == torch.int64 and got.shape == ()
    assert int(got) == int((~np.isfinite(values.float().numpy())).sum()) == bad
