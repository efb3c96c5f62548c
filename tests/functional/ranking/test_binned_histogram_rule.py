"""Binned AUROC's histogram (int32 indices, integer label offsets, cached ones, blocks; issue
16) against a numpy count of the documented rule: bin = floor((score - low) * num_bins /
(high - low)) clamped to [0, num_bins - 1], NaN in bin 0, binary labels > 0 positive,
multiclass labels outside [0, num_classes) left out. The error counts of the metric against
numpy counts of the same inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from torchtally._errors import MetricValueError
from torchtally.functional.ranking import _binned_auroc as binned_module
from torchtally.functional.ranking import binned_auroc_update
from torchtally.metrics import AUROCMetric


def _numpy_bins(scores: np.ndarray, num_bins: int, low: float, high: float) -> np.ndarray:
    # in the scores' precision (float32 scores scale in float32, as torch does)
    kind = scores.dtype.type
    scale = kind(num_bins / (high - low))
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = (scores - kind(low)) * scale if low else scores * scale
    scaled = np.nan_to_num(scaled, nan=0.0)
    return np.floor(np.clip(scaled, 0, num_bins - 1)).astype(np.int64)


def _numpy_binary(labels, scores, num_bins, low, high) -> np.ndarray:
    bins = _numpy_bins(scores, num_bins, low, high)
    expected = np.zeros((1, 2, num_bins))
    np.add.at(expected[0], ((labels > 0).astype(np.int64), bins), 1.0)
    return expected


def _assert_error_counts(metric: AUROCMetric, invalid: int, nonfinite: int, outside: int) -> None:
    """`compute` raises naming each kind with its exact count."""
    with pytest.raises(MetricValueError) as raised:
        metric.compute()
    message = str(raised.value)
    assert f"invalid labels ({invalid} values)" in message
    assert f"non-finite predictions ({nonfinite} values)" in message
    assert f"predictions outside score_range ({outside} values)" in message


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(binned_module, "_BLOCK_FROM", 300)
    monkeypatch.setattr(binned_module, "_BLOCK", 128)
    monkeypatch.setattr(binned_module, "_FLOAT_MASKS_FROM", 100)  # float-mask range counts


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    n=st.integers(1, 700),
    num_bins=st.integers(1, 50),
    low_high=st.sampled_from([(0.0, 1.0), (-1.0, 1.0), (-0.8, 2.5), (0.0, 3.0)]),
    label_kind=st.sampled_from(["int", "bool", "float", "wild"]),
    dtype=st.sampled_from([torch.float32, torch.float64, torch.float16]),
    seed=st.integers(0, 2**31 - 1),
)
def test_binary_histogram_follows_the_bin_rule(
    small_blocks: None, n, num_bins, low_high, label_kind, dtype, seed
) -> None:
    g = torch.Generator().manual_seed(seed)
    low, high = low_high
    # coarse scores (many on bin edges), some outside the range and some non-finite
    scores = (torch.randint(-3, 24, (n,), generator=g).double() / 20) * (high - low) + low
    specials = torch.tensor([math.nan, math.inf, -math.inf], dtype=torch.float64)
    pick = torch.rand(n, generator=g) < 0.05
    scores = torch.where(pick, specials[torch.randint(0, 3, (n,), generator=g)], scores)
    scores = scores.to(dtype)
    raw = torch.randint(-1, 3, (n,), generator=g)  # -1 and 2: positive iff > 0
    labels = {
        "int": raw.clamp(0, 1),
        "bool": raw > 0,
        "float": raw.double() * 0.75,
        "wild": raw * 50,
    }[label_kind]
    got = binned_auroc_update(labels, scores, num_bins, (low, high))
    # float16 scores are binned in float32
    as_numpy = scores.numpy() if dtype == torch.float64 else scores.float().numpy()
    expected = _numpy_binary(labels.double().numpy(), as_numpy, num_bins, low, high)
    np.testing.assert_array_equal(got.numpy(), expected)


def test_metric_counts_and_errors_match_numpy(small_blocks: None) -> None:
    g = torch.Generator().manual_seed(3)
    n, num_bins = 1000, 20
    scores = torch.rand(n, generator=g) * 1.2 - 0.1  # some outside [0, 1]
    scores[::97] = math.nan
    scores[5::131] = math.inf
    labels = torch.randint(0, 2, (n,), generator=g)
    labels[::89] = 7  # invalid: not 0/1, counted positive (> 0)
    metric = AUROCMetric(num_bins=num_bins)
    metric.update(labels[:400], scores[:400])  # one piece
    metric.update(labels[400:], scores[400:])  # blocks of 128
    s, y = scores.numpy(), labels.numpy()
    expected = _numpy_binary(y, s, num_bins, 0.0, 1.0)
    np.testing.assert_array_equal(metric.binned_histogram().numpy(), expected)
    finite = np.isfinite(s)
    invalid = int(((y != 0) & (y != 1)).sum())
    nonfinite = int((~finite).sum())
    outside = int(((s < 0) | (s > 1)).sum())  # NaN compares false; inf counts
    _assert_error_counts(metric, invalid, nonfinite, outside)


def test_multiclass_histogram_follows_the_bin_rule(small_blocks: None) -> None:
    g = torch.Generator().manual_seed(4)
    n, classes, num_bins = 500, 4, 7
    scores = torch.rand(n, classes, generator=g, dtype=torch.float64)
    scores[3, 1] = math.nan
    labels = torch.randint(-1, classes + 1, (n,), generator=g)  # -1 and 4 left out
    got = binned_auroc_update(labels, scores, num_bins, num_classes=classes)
    bins = _numpy_bins(scores.numpy(), num_bins, 0.0, 1.0)
    expected = np.zeros((classes, 2, num_bins))
    y = labels.numpy()
    for i in range(n):
        if 0 <= y[i] < classes:
            for c in range(classes):
                expected[c, int(y[i] == c), bins[i, c]] += 1
    np.testing.assert_array_equal(got.numpy(), expected)


def test_multiclass_metric_errors_in_blocks_match_numpy(small_blocks: None) -> None:
    g = torch.Generator().manual_seed(5)
    n, classes = 900, 3  # 2700 scores: blocks of 42 rows
    scores = torch.rand(n, classes, generator=g) * 1.2 - 0.1
    scores[::50, 1] = math.nan
    scores[::70, 0] = -math.inf
    labels = torch.randint(-1, classes + 1, (n,), generator=g)
    metric = AUROCMetric(classes, num_bins=8)
    metric.update(labels, scores)
    s, y = scores.numpy(), labels.numpy()
    invalid = int(((y < 0) | (y >= classes)).sum())
    # rows whose maximum is NaN or infinite (a -inf score, a masked class, is no error)
    bad_rows = int((~np.isfinite(s.max(axis=1))).sum())
    outside = int(((s < 0) | (s > 1)).sum())
    _assert_error_counts(metric, invalid, bad_rows, outside)


def test_scores_that_require_grad(small_blocks: None) -> None:
    g = torch.Generator().manual_seed(6)
    scores = torch.rand(700, generator=g, dtype=torch.float64).requires_grad_()
    labels = torch.randint(0, 2, (700,), generator=g)
    metric = AUROCMetric(num_bins=9)
    metric.update(labels, scores)  # blocks, float-mask range counts
    expected = _numpy_binary(labels.numpy(), scores.detach().numpy(), 9, 0.0, 1.0)
    np.testing.assert_array_equal(metric.binned_histogram().numpy(), expected)
