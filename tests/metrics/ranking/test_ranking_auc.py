"""AUCMetric (cstorch / TF `metrics.auc`): hand-computed values from the definition, a
direct numpy transcription of the definition (tiled threshold comparisons), and scikit-learn
for many thresholds."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import average_precision_score, roc_auc_score

from torchtally._errors import MetricValueError
from torchtally.functional.ranking import auc
from torchtally.metrics import MetricCollection
from torchtally.metrics.ranking import AUCMetric

LABELS = torch.tensor([0, 0, 1, 1])
SCORES = torch.tensor([0.1, 0.6, 0.4, 0.9])

# Thresholds (-1e-7, 0.5, 1 + 1e-7): TP = (2, 1, 0), FP = (2, 1, 0), FN = (0, 1, 2),
# TN = (0, 1, 2); FPR = TPR = recall = (1, .5, 0); precision = (.5, .5, 0/0 -> 0).
HAND = [
    ("ROC", "interpolation", 0.5 * (1 + 0.5) / 2 + 0.5 * (0.5 + 0) / 2),
    ("ROC", "minoring", 0.5 * 0.5 + 0.5 * 0.0),
    ("ROC", "majoring", 0.5 * 1.0 + 0.5 * 0.5),
    ("PR", "minoring", 0.5 * 0.5 + 0.5 * 0.0),
    ("PR", "majoring", 0.5 * 0.5 + 0.5 * 0.5),
    # Interpolating TP over P = TP + FP: slope dTP/dP = 1/2 on both intervals, intercept 0,
    # so each adds slope * dTP / (TP + FN) = 0.5 * 1 / 2.
    ("PR", "interpolation", 0.25 + 0.25),
    ("PR", "careful_interpolation", 0.5),
]


@pytest.mark.parametrize(("curve", "method", "expected"), HAND)
def test_hand_computed_three_thresholds(curve: str, method: str, expected: float) -> None:
    metric = AUCMetric(num_thresholds=3, curve=curve, summation_method=method)
    metric.update(LABELS[:1], SCORES[:1])
    metric.update(LABELS[1:], SCORES[1:])
    assert float(metric.compute()) == pytest.approx(expected, abs=1e-15)


def test_weights_mask_and_scale() -> None:
    # Thresholds (-eps, .5, 1+eps); the 0.4 positive has weight 0, the negative weight 2:
    # TP = (1, 1, 0), FP = (2, 0, 0), TN = (0, 2, 2), FN = (0, 0, 1); FPR = (1, 0, 0),
    # TPR = (1, 1, 0): the ROC area is 1.
    metric = AUCMetric(num_thresholds=3)
    metric.update(
        torch.tensor([0, 1, 1]), torch.tensor([0.2, 0.7, 0.4]), torch.tensor([2.0, 1.0, 0.0])
    )
    assert float(metric.compute()) == 1.0


def test_predictions_on_thresholds_and_ends() -> None:
    """A prediction equal to a threshold is not above it; 0 and 1 are inside the end points."""
    # Thresholds (-eps, .5, 1+eps). The positive at exactly 0.5 is below the middle one.
    labels, scores = torch.tensor([1, 0, 1]), torch.tensor([0.5, 0.0, 1.0])
    metric = AUCMetric(num_thresholds=3, summation_method="minoring")
    metric.update(labels, scores)
    # TP = (2, 1, 0), FN = (0, 1, 2); FP = (1, 0, 0), TN = (0, 1, 1). FPR = (1, 0, 0),
    # TPR = (1, .5, 0): minoring area = 1 * 0.5.
    assert float(metric.compute()) == 0.5


def _definition(
    labels: np.ndarray,
    scores: np.ndarray,
    weights: np.ndarray,
    inner: list[float],
    curve: str,
    method: str,
) -> float:
    """cstorch's AUCMetric written out: tiled comparisons against float32 thresholds."""
    thresholds = np.array([-1e-7, *sorted(inner), 1 + 1e-7], dtype=np.float32).astype(np.float64)
    above = scores[None, :] > thresholds[:, None]
    positive = labels[None, :] > 0
    tp = (above & positive).astype(np.float64) @ weights
    fp = (above & ~positive).astype(np.float64) @ weights
    fn = (~above & positive).astype(np.float64) @ weights
    tn = (~above & ~positive).astype(np.float64) @ weights

    def div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.divide(a, b, out=np.zeros_like(a), where=b != 0)

    if curve == "PR" and method == "interpolation":
        dtp = tp[:-1] - tp[1:]
        p = tp + fp
        slope = div(dtp, np.maximum(p[:-1] - p[1:], 0))
        intercept = tp[1:] - slope * p[1:]
        ratio = np.where((p[:-1] > 0) & (p[1:] > 0), div(p[:-1], np.maximum(p[1:], 0)), 1.0)
        return float(div(slope * (dtp + intercept * np.log(ratio)), tp[1:] + fn[1:]).sum())
    recall = div(tp, tp + fn)
    x, y = (div(fp, fp + tn), recall) if curve == "ROC" else (recall, div(tp, tp + fp))
    heights = {
        "interpolation": (y[:-1] + y[1:]) / 2,
        "minoring": np.minimum(y[:-1], y[1:]),
        "majoring": np.maximum(y[:-1], y[1:]),
    }[method]
    return float(((x[:-1] - x[1:]) * heights).sum())


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(1, 80),
    num_thresholds=st.integers(2, 40),
    curve=st.sampled_from(["ROC", "PR"]),
    method=st.sampled_from(["interpolation", "minoring", "majoring"]),
    weighted=st.booleans(),
    custom=st.booleans(),
)
def test_matches_the_definition(
    seed: int,
    n: int,
    num_thresholds: int,
    curve: str,
    method: str,
    weighted: bool,
    custom: bool,
) -> None:
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, n)
    scores = rng.random(n).astype(np.float32)
    scores[rng.random(n) < 0.2] = rng.choice([0.0, 0.5, 1.0])  # on thresholds and ends
    weights = rng.integers(0, 4, n).astype(np.float64) if weighted else np.ones(n)
    if custom:
        inner = rng.random(num_thresholds).tolist()
        metric = AUCMetric(curve=curve, summation_method=method, thresholds=inner)
    else:
        inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        metric = AUCMetric(num_thresholds, curve, summation_method=method)
    half = n // 2
    for part in (slice(0, half), slice(half, n)):
        w = torch.as_tensor(weights[part]) if weighted else None
        metric.update(torch.as_tensor(labels[part]), torch.as_tensor(scores[part]), w)
    expected = _definition(labels, scores.astype(np.float64), weights, inner, curve, method)
    assert float(metric.compute()) == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_many_thresholds_approach_sklearn() -> None:
    g = torch.Generator().manual_seed(0)
    n = 50_000
    labels = (torch.rand(n, generator=g) < 0.4).long()
    scores = (torch.rand(n, generator=g) + 0.5 * labels) / 1.5
    roc = AUCMetric(num_thresholds=2001)
    pr = AUCMetric(num_thresholds=2001, curve="PR")
    for metric in (roc, pr):
        metric.update(labels, scores)
    assert float(roc.compute()) == pytest.approx(roc_auc_score(labels, scores), abs=1e-3)
    assert float(pr.compute()) == pytest.approx(average_precision_score(labels, scores), abs=1e-2)


def test_functional_matches_metric_and_weights_broadcast() -> None:
    metric = AUCMetric(num_thresholds=11, curve="PR")
    weights = torch.tensor([[1.0], [2.0]])
    labels, scores = torch.tensor([[0, 1, 1], [1, 0, 1]]), torch.rand(2, 3)
    metric.update(labels, scores, weights)
    expected = auc(labels, scores, weights.expand(2, 3), num_thresholds=11, curve="PR")
    assert isinstance(metric.compute(), float)  # as cstorch
    assert metric.compute() == pytest.approx(float(expected), rel=1e-12)
    with pytest.raises(ValueError, match=r"`weights` must be broadcastable"):
        metric.update(labels, scores, torch.ones(3, 2))


def test_roc_and_pr_share_one_update_in_a_collection() -> None:
    roc, pr = AUCMetric(num_thresholds=9), AUCMetric(num_thresholds=9, curve="PR", name="pr")
    assert roc.shared_statistic() == pr.shared_statistic()
    assert roc.shared_statistic() != AUCMetric(num_thresholds=8).shared_statistic()
    collection = MetricCollection([roc, pr])
    assert collection.groups == [["auc", "pr"]]
    labels, scores = torch.tensor([0, 1, 1, 0]), torch.tensor([0.2, 0.9, 0.6, 0.7])
    collection.update(labels, scores)
    values = collection.compute()
    assert float(values["auc"]) == pytest.approx(float(auc(labels, scores, num_thresholds=9)))
    expected_pr = auc(labels, scores, num_thresholds=9, curve="PR")
    assert float(values["pr"]) == pytest.approx(float(expected_pr))


def test_arguments_and_values_are_checked() -> None:
    with pytest.raises(ValueError, match=r"^Argument `num_thresholds` must be an integer >= 2\. "):
        AUCMetric(num_thresholds=1)
    with pytest.raises(ValueError, match=r"`curve` must be one of 'ROC', 'PR'\. Received"):
        AUCMetric(curve="roc")
    with pytest.raises(ValueError, match=r"`summation_method` must be one of"):
        AUCMetric(summation_method="trapezoidal")
    with pytest.raises(ValueError, match=r"`thresholds` must be a sequence of numbers in"):
        AUCMetric(thresholds=[0.5, 1.5])
    metric = AUCMetric(thresholds=[0.9, 0.1])
    assert metric.num_thresholds == 4
    assert metric.thresholds[1:3].tolist() == pytest.approx([0.1, 0.9])
    metric.update(torch.tensor([-2, 1]), torch.tensor([0.5, -0.5]), torch.tensor([-1.0, 1.0]))
    message = r"negative labels \(1 value\).*outside \[0, 1\] \(1 value\).*negative weights"
    with pytest.raises(MetricValueError, match=message):
        metric.compute()
