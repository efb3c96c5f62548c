"""The checked regression sums (issue 16) count non-finite labels and predictions from the sums
themselves (finite marks written over them in the float64 copies): the counts equal numpy's
`isfinite` counts for NaN and ±inf anywhere, alone or at the same index in both inputs, next to
the largest finite float32 values, over many blocks; clean batches give scikit-learn's values."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import mean_absolute_error, mean_squared_error, r2_score

from torchtally.functional.regression import _errors, _r2
from torchtally.functional.regression._errors import (
    absolute_error_sum_checked,
    squared_error_sum_checked,
)
from torchtally.functional.regression._r2 import r2_sums_checked
from torchtally.metrics import MAEMetric, MetricValueError, MSEMetric, R2ScoreMetric

FLOAT32_MAX = torch.finfo(torch.float32).max
BAD = (float("nan"), float("inf"), float("-inf"))


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    # blocks of 700 elements from 2000 up: many blocks and a ragged last one at test sizes
    for module in (_errors, _r2):
        monkeypatch.setattr(module, "_BLOCK_FROM", 2000)
        monkeypatch.setattr(module, "_BLOCK", 700)


def _extreme(size: int, seed: int) -> torch.Tensor:
    """float32 values over the whole finite range, with ±FLOAT32_MAX among them."""
    g = torch.Generator().manual_seed(seed)
    values = (torch.rand(size, generator=g, dtype=torch.float64) * 2 - 1) * FLOAT32_MAX
    values = values.float()
    values[:3] = torch.tensor([FLOAT32_MAX, -FLOAT32_MAX, 0.0])
    return values


def _nonfinite(values: torch.Tensor) -> int:
    return int((~np.isfinite(values.numpy())).sum())


def _checked(kind: str, labels: torch.Tensor, predictions: torch.Tensor):
    if kind == "r2":
        *_, bad_labels, bad_predictions = r2_sums_checked(labels, predictions)
        return bad_labels, bad_predictions
    function = squared_error_sum_checked if kind == "squared" else absolute_error_sum_checked
    _, bad_labels, bad_predictions = function(labels, predictions)
    return bad_labels, bad_predictions


@settings(max_examples=40, deadline=None)
@given(
    size=st.integers(2000, 4000),
    label_bad=st.lists(st.tuples(st.integers(0, 3999), st.sampled_from(BAD)), max_size=12),
    prediction_bad=st.lists(st.tuples(st.integers(0, 3999), st.sampled_from(BAD)), max_size=12),
    seed=st.integers(0, 2**16),
)
def test_counts_match_numpy_anywhere(
    size: int,
    label_bad: list[tuple[int, float]],
    prediction_bad: list[tuple[int, float]],
    seed: int,
) -> None:
    with pytest.MonkeyPatch.context() as patch:
        for module in (_errors, _r2):
            patch.setattr(module, "_BLOCK_FROM", 2000)
            patch.setattr(module, "_BLOCK", 700)
        labels, predictions = _extreme(size, seed), _extreme(size, seed + 1)
        for index, bad in label_bad:
            labels[index % size] = bad
        for index, bad in prediction_bad:
            predictions[index % size] = bad
        expected = (_nonfinite(labels), _nonfinite(predictions))
        for kind in ("squared", "absolute", "r2"):
            bad_labels, bad_predictions = _checked(kind, labels, predictions)
            assert bad_labels is not None and bad_predictions is not None
            assert bad_labels.dtype == torch.int64 and bad_predictions.dtype == torch.int64
            assert (int(bad_labels), int(bad_predictions)) == expected, kind


@pytest.mark.parametrize("size", [(1 << 16) + 5, 300_001])
def test_counts_at_the_default_block_size(size: int) -> None:
    labels, predictions = _extreme(size, 1), _extreme(size, 2)
    g = torch.Generator().manual_seed(3)
    picks = torch.randperm(size, generator=g)
    labels[picks[:1000]] = float("nan")
    labels[picks[1000:1500]] = float("-inf")
    predictions[picks[500:1200]] = float("inf")  # 500 at the labels' NaNs, 200 at their -inf
    predictions[picks[5000:5001]] = float("nan")
    for kind in ("squared", "absolute", "r2"):
        bad_labels, bad_predictions = _checked(kind, labels, predictions)
        assert (int(bad_labels), int(bad_predictions)) == (1500, 701), kind


def test_every_element_bad_does_not_overflow(small_blocks: None) -> None:
    labels = torch.full((5000,), float("inf"))
    predictions = torch.full((5000,), float("nan"))
    for kind in ("squared", "absolute", "r2"):
        assert tuple(map(int, _checked(kind, labels, predictions))) == (5000, 5000), kind


@pytest.mark.parametrize("size", [2100, 5003])
def test_clean_values_match_sklearn(small_blocks: None, size: int) -> None:
    labels = _extreme(size, 7) / 1e10
    predictions = labels + _extreme(size, 8) / 1e12  # close predictions: the subtraction counts
    y, p = labels.double().numpy(), predictions.double().numpy()
    total, bad_labels, bad_predictions = squared_error_sum_checked(labels, predictions)
    assert (int(bad_labels), int(bad_predictions)) == (0, 0)
    assert float(total) / size == pytest.approx(mean_squared_error(y, p), rel=1e-12)
    total, *_ = absolute_error_sum_checked(labels, predictions)
    assert float(total) / size == pytest.approx(mean_absolute_error(y, p), rel=1e-12)
    for metric, oracle in (
        (MSEMetric(), mean_squared_error),
        (MAEMetric(), mean_absolute_error),
        (R2ScoreMetric(), r2_score),
    ):
        metric.update(labels, predictions)
        assert float(metric.compute()) == pytest.approx(float(oracle(y, p)), rel=1e-12)
    assert np.array_equal(labels.double().numpy(), y)  # the inputs are not modified


def test_two_output_r2_counts_and_values(small_blocks: None) -> None:
    g = torch.Generator().manual_seed(9)
    labels = torch.randn(3000, 2, generator=g)
    predictions = labels + 0.1 * torch.randn(3000, 2, generator=g)
    metric = R2ScoreMetric(num_outputs=2, multioutput="raw_values")
    metric.update(labels, predictions)
    expected = r2_score(
        labels.double().numpy(), predictions.double().numpy(), multioutput="raw_values"
    )
    np.testing.assert_allclose(metric.compute().numpy(), expected, rtol=1e-12)
    labels[5, 0], labels[2999, 1], predictions[5, 1] = float("nan"), float("inf"), -float("inf")
    predictions[17, 0] = float("nan")
    *_, bad_labels, bad_predictions = r2_sums_checked(labels, predictions)
    assert (int(bad_labels), int(bad_predictions)) == (2, 2)


@pytest.mark.parametrize("metric_type", [MSEMetric, MAEMetric, R2ScoreMetric])
def test_metrics_raise_with_the_counts(small_blocks: None, metric_type: type) -> None:
    labels, predictions = _extreme(4000, 11), _extreme(4000, 12)
    labels[[3, 700, 701]] = float("nan")
    predictions[[3, 1400]] = float("-inf")
    metric = metric_type()
    metric.update(labels[:100], predictions[:100])  # one piece: counted apart
    metric.update(labels, predictions)  # blocked: counted by the marks
    with pytest.raises(
        MetricValueError, match=r"non-finite labels \(4 values\); non-finite predictions \(3 val"
    ):
        metric.compute()
    unchecked = metric_type(check_values=False)
    unchecked.update(labels, predictions)
    assert bool(torch.isnan(torch.as_tensor(unchecked.compute())))  # NaN, no marks, no error
