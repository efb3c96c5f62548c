"""CalibrationErrorMetric against TorchMetrics 1.9 and hand computations (the 1.0 edge)."""

from __future__ import annotations

import doctest
import importlib

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torchmetrics.classification import BinaryCalibrationError, MulticlassCalibrationError

from torchtally.functional.calibration import calibration_error
from torchtally.metrics.calibration import CalibrationErrorMetric
from torchtally.testing import assert_traceable


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(1, 60),
    n_bins=st.integers(1, 20),
    norm=st.sampled_from(["l1", "l2", "max"]),
)
def test_binary_matches_torchmetrics(seed: int, n: int, n_bins: int, norm: str) -> None:
    g = torch.Generator().manual_seed(seed)
    preds = torch.rand(n, generator=g, dtype=torch.float64) * 0.999  # never exactly 1.0
    target = torch.randint(0, 2, (n,), generator=g)
    theirs = BinaryCalibrationError(n_bins=n_bins, norm=norm)
    theirs.update(preds, target)
    ours = CalibrationErrorMetric(n_bins=n_bins, norm=norm)
    ours.update(preds[: n // 2], target[: n // 2])
    ours.update(preds[n // 2 :], target[n // 2 :])
    assert float(ours.compute()) == pytest.approx(float(theirs.compute()), abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(1, 60),
    classes=st.integers(2, 6),
    norm=st.sampled_from(["l1", "l2", "max"]),
    from_logits=st.booleans(),
)
def test_multiclass_matches_torchmetrics(
    seed: int, n: int, classes: int, norm: str, from_logits: bool
) -> None:
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(n, classes, generator=g, dtype=torch.float64) * 2
    target = torch.randint(0, classes, (n,), generator=g)
    preds = logits if from_logits else torch.softmax(logits, 1)
    theirs = MulticlassCalibrationError(classes, n_bins=10, norm=norm)
    # TorchMetrics softmaxes only when a value lies outside [0, 1]; give it probabilities.
    theirs.update(torch.softmax(logits, 1), target)
    ours = CalibrationErrorMetric(classes, n_bins=10, norm=norm, from_logits=from_logits)
    ours.update(preds, target)
    assert float(ours.compute()) == pytest.approx(float(theirs.compute()), abs=1e-6)


def test_confidence_one_lands_in_the_last_bin() -> None:
    # Two bins, [0, 0.5) and [0.5, 1]: 0.5 and 1.0 share the last bin (mean conf 0.75, acc 1/2).
    preds = torch.tensor([0.2, 0.5, 1.0])
    target = torch.tensor([0, 1, 0])
    ece = 1 / 3 * abs(0 - 0.2) + 2 / 3 * abs(0.5 - 0.75)
    assert float(calibration_error(preds, target, n_bins=2)) == pytest.approx(ece)
    mce = max(0.2, 0.25)
    assert float(calibration_error(preds, target, n_bins=2, norm="max")) == pytest.approx(mce)
    rms = np.sqrt(1 / 3 * 0.2**2 + 2 / 3 * 0.25**2)
    assert float(calibration_error(preds, target, n_bins=2, norm="l2")) == pytest.approx(rms)


def test_weights_equal_repetition_and_ignore_index_drops() -> None:
    g = torch.Generator().manual_seed(3)
    preds, target = torch.rand(20, generator=g), torch.randint(0, 2, (20,), generator=g)
    repeats = torch.randint(0, 4, (20,), generator=g)
    weighted = calibration_error(preds, target, weights=repeats.float())
    repeated = calibration_error(
        preds.repeat_interleave(repeats), target.repeat_interleave(repeats)
    )
    assert float(weighted) == pytest.approx(float(repeated))
    ignoring = CalibrationErrorMetric(ignore_index=-1)
    ignoring.update(
        torch.cat([preds, torch.tensor([0.9])]), torch.cat([target, torch.tensor([-1])])
    )
    assert float(ignoring.compute()) == pytest.approx(float(calibration_error(preds, target)))


def test_reliability_diagram_data() -> None:
    metric = CalibrationErrorMetric(n_bins=4)
    metric.update(torch.tensor([0.1, 0.2, 0.6, 1.0]), torch.tensor([0, 1, 1, 1]))
    diagram = metric.reliability_diagram()
    torch.testing.assert_close(diagram["edges"], torch.linspace(0, 1, 5, dtype=torch.float64))
    torch.testing.assert_close(
        diagram["weight"], torch.tensor([2.0, 0.0, 1.0, 1.0], dtype=torch.float64)
    )
    expected_confidence = torch.tensor([0.15, float("nan"), 0.6, 1.0], dtype=torch.float64)
    torch.testing.assert_close(diagram["confidence"], expected_confidence, equal_nan=True)
    expected_accuracy = torch.tensor([0.5, float("nan"), 1.0, 1.0], dtype=torch.float64)
    torch.testing.assert_close(diagram["accuracy"], expected_accuracy, equal_nan=True)


def test_nan_before_any_sample_and_argument_errors() -> None:
    assert torch.isnan(CalibrationErrorMetric().compute())
    assert torch.isnan(CalibrationErrorMetric(norm="max").compute())
    with pytest.raises(ValueError, match=r"`n_bins` must be an integer >= 1.*n_bins=0"):
        CalibrationErrorMetric(n_bins=0)
    with pytest.raises(ValueError, match="`norm` must be one of"):
        CalibrationErrorMetric(norm="l3")
    with pytest.raises(ValueError, match=r"\(N, num_classes=3\)"):
        CalibrationErrorMetric(3).update(torch.rand(4, 2), torch.zeros(4, dtype=torch.long))
    with pytest.raises(TypeError, match="`preds` must be a floating-point"):
        CalibrationErrorMetric().update(torch.ones(3, dtype=torch.long), torch.ones(3))


def test_traceable() -> None:
    metric = CalibrationErrorMetric(4, from_logits=True)
    report = assert_traceable(metric, torch.randn(8, 4), torch.randint(0, 4, (8,)))
    assert report.graphs == 1


def test_docstring_examples() -> None:
    for name in (
        "torchtally.functional.calibration._calibration",
        "torchtally.metrics.calibration._calibration",
    ):
        result = doctest.testmod(importlib.import_module(name), extraglobs={"torch": torch})
        assert result.attempted > 0 and result.failed == 0
